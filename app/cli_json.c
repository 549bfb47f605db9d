/* cli_json.c: valid JSON whatever the report holds, written atomically (cli_json.h). */
#include "cli_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int cli_utf8_sequence(const unsigned char *s)
{
    const unsigned char c = s[0];
    if (c < 0x80) return 1;
    int n;
    unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c == 0xE0) n = 3, lo = 0xA0;           /* no overlong forms */
    else if (c == 0xED) n = 3, hi = 0x9F;           /* no UTF-16 surrogates */
    else if (c >= 0xE1 && c <= 0xEF) n = 3;
    else if (c == 0xF0) n = 4, lo = 0x90;           /* no overlong forms */
    else if (c >= 0xF1 && c <= 0xF3) n = 4;
    else if (c == 0xF4) n = 4, hi = 0x8F;           /* nothing over U+10FFFF */
    else return 0;                                  /* 80..C1, F5..FF */
    if (s[1] < lo || s[1] > hi) return 0;           /* ('\0' fails here: truncated) */
    for (int k = 2; k < n; k++)
        if (s[k] < 0x80 || s[k] > 0xBF) return 0;
    return n;
}

/* A valid UTF-8 copy of s (cJSON_malloc'd), or NULL when s is valid already or memory
 * runs out (then s is left as it is). */
static char *utf8_fixed(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t bad = 0, len = 0;
    for (; *p; len++) {
        int n = cli_utf8_sequence(p);
        if (!n) bad++, n = 1;
        p += n, len += (size_t)n - 1;
    }
    if (!bad) return NULL;
    char *out = cJSON_malloc(len + 2 * bad + 1), *o = out;
    if (!out) return NULL;
    for (p = (const unsigned char *)s; *p;) {
        int n = cli_utf8_sequence(p);
        if (n) {
            memcpy(o, p, (size_t)n);
            o += n, p += n;
        } else { /* U+FFFD REPLACEMENT CHARACTER */
            memcpy(o, "\xEF\xBF\xBD", 3);
            o += 3, p++;
        }
    }
    *o = '\0';
    return out;
}

void cli_json_sanitize(cJSON *item)
{
    for (; item; item = item->next) {
        if (item->string && !(item->type & cJSON_StringIsConst)) {
            char *k = utf8_fixed(item->string);
            if (k) {
                cJSON_free(item->string);
                item->string = k;
            }
        }
        if (cJSON_IsNumber(item) && !isfinite(item->valuedouble))
            item->type = (item->type & ~0xFF) | cJSON_NULL; /* NaN is not JSON */
        else if ((cJSON_IsString(item) || cJSON_IsRaw(item)) && item->valuestring &&
                 !(item->type & cJSON_IsReference)) {
            char *v = utf8_fixed(item->valuestring);
            if (v) {
                cJSON_free(item->valuestring);
                item->valuestring = v;
            }
        }
        if (item->child) cli_json_sanitize(item->child);
    }
}

int cli_json_write(const char *path, cJSON *doc, stap_write_mode mode, stap_error *err)
{
    cli_json_sanitize(doc);
    char *text = cJSON_Print(doc);
    if (!text) return stap_fail(err, STAP_ENOMEM, "out of memory formatting JSON");
    int st = STAP_OK;
    const size_t n = strlen(text);
    text[n] = '\n'; /* cJSON_Print's terminator becomes the last line's end */
    if (!strcmp(path, "-")) {
        errno = 0;
        if (fwrite(text, 1, n + 1, stdout) != n + 1 || fflush(stdout) != 0)
            st = stap_fail(err, STAP_EIO, "cannot write the JSON report to stdout: %s",
                           errno ? strerror(errno) : "write error");
    } else {
        st = stap_atomic_write(path, text, n + 1, mode, err);
    }
    cJSON_free(text);
    return st;
}
