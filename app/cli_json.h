/* cli_json: rtstap's JSON reports (--json FILE|-) stay valid JSON whatever they hold: a
 * number that is not finite (NaN, an infinity) is written as null, and a string that is
 * not valid UTF-8 (a path or host name with arbitrary bytes) has each invalid byte
 * replaced by U+FFFD; quotes, backslashes and control characters are escaped by cJSON. */
#ifndef CLI_JSON_H
#define CLI_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "h5io.h" /* stap_write_mode */

/* Make item and everything in it valid as above (keys included), in place. */
void cli_json_sanitize(cJSON *item);
/* The length of the valid UTF-8 sequence at s (1..4), or 0 when s[0] does not start one
 * (a stray continuation byte, an overlong form, a surrogate, a code point over U+10FFFF,
 * a truncated sequence). s[0] must not be '\0'. */
int cli_utf8_sequence(const unsigned char *s);
/* Sanitize doc and write it, with a final newline, to path atomically in `mode`, or to
 * stdout for "-". */
int cli_json_write(const char *path, cJSON *doc, stap_write_mode mode, stap_error *err);

#endif
