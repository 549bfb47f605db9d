/* jsoncheck: strict JSON (RFC 8259), checked before cJSON builds its tree from a file a user
 * gives (SigMF metadata). cJSON 1.7.15 takes what it should not: text after the value, a
 * key twice (the first wins, unseen), "\u0000" or a malformed "\uZZZZ" (both decoded to a
 * NUL that silently ends the string: "stap_cf32\uZZZZ_le" became "stap_cf32"), raw control
 * characters, bytes that are not UTF-8. Internal to stap/. */
#ifndef JSONCHECK_H
#define JSONCHECK_H

#include "rt_hidden.h"
#include <stddef.h>

/* 0 when text[0..len) is exactly one JSON value (blanks around it) whose strings are valid
 * UTF-8 without NUL, whose objects have no repeated key, nested at most 64 deep; else -1,
 * *at the byte offset, and in why what is wrong and where: the path of the key it is in
 * ("\"global\".\"core:datatype\"", or "(top level)"). */
RT_INTERNAL int stap_json_check(const char *text, size_t len, size_t *at, char *why, size_t why_len);

#endif
