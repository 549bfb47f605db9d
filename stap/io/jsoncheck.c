/* jsoncheck.c: a strict JSON checker (jsoncheck.h): recursive descent over RFC 8259's
 * grammar, keeping the path of keys for its messages. */
#include "jsoncheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 64, KEY_SHOWN = 48 };

typedef struct jc {
    const unsigned char *s;
    size_t n, i;
    int depth;
    char path[MAX_DEPTH][KEY_SHOWN + 16]; /* per level: "\"key\"" or "[3]"               */
    char *why;
    size_t why_len, *at;
    int failed;
} jc;

static void where(const jc *c, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int d = 0; d < c->depth && o < len; d++)
        if (c->path[d][0])
            o += (size_t)snprintf(buf + o, len - o, "%s%s", o && c->path[d][0] != '[' ? "." : "",
                                  c->path[d]);
    if (!buf[0]) snprintf(buf, len, "(top level)");
}

static int fail(jc *c, const char *what)
{
    if (c->failed) return -1;
    char w[MAX_DEPTH * 8 + 128];
    where(c, w, sizeof w);
    snprintf(c->why, c->why_len, "%s: %s", w, what);
    *c->at = c->i;
    c->failed = 1;
    return -1;
}

static void ws(jc *c)
{
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' ||
                           c->s[c->i] == '\r'))
        c->i++;
}

static int hex4(const unsigned char *p, unsigned *v)
{
    *v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned d;
        if (p[k] >= '0' && p[k] <= '9') d = p[k] - '0';
        else if (p[k] >= 'a' && p[k] <= 'f') d = p[k] - 'a' + 10;
        else if (p[k] >= 'A' && p[k] <= 'F') d = p[k] - 'A' + 10;
        else return -1;
        *v = *v << 4 | d;
    }
    return 0;
}

/* The length of the UTF-8 sequence at p (room: left bytes), 0 when it is not one. */
static int utf8_len(const unsigned char *p, size_t left)
{
    const unsigned char b = p[0];
    int n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF) n = 2;
    else if (b == 0xE0) n = 3, lo = 0xA0;
    else if (b == 0xED) n = 3, hi = 0x9F;
    else if (b >= 0xE1 && b <= 0xEF) n = 3;
    else if (b == 0xF0) n = 4, lo = 0x90;
    else if (b >= 0xF1 && b <= 0xF3) n = 4;
    else if (b == 0xF4) n = 4, hi = 0x8F;
    else return 0;
    if ((size_t)n > left || p[1] < lo || p[1] > hi) return 0;
    for (int k = 2; k < n; k++)
        if (p[k] < 0x80 || p[k] > 0xBF) return 0;
    return n;
}

static void put_utf8(char **o, unsigned cp)
{
    unsigned char *u = (unsigned char *)*o;
    if (cp < 0x80) *u++ = (unsigned char)cp;
    else if (cp < 0x800) *u++ = (unsigned char)(0xC0 | cp >> 6), *u++ = (unsigned char)(0x80 | (cp & 63));
    else if (cp < 0x10000)
        *u++ = (unsigned char)(0xE0 | cp >> 12), *u++ = (unsigned char)(0x80 | (cp >> 6 & 63)),
        *u++ = (unsigned char)(0x80 | (cp & 63));
    else
        *u++ = (unsigned char)(0xF0 | cp >> 18), *u++ = (unsigned char)(0x80 | (cp >> 12 & 63)),
        *u++ = (unsigned char)(0x80 | (cp >> 6 & 63)), *u++ = (unsigned char)(0x80 | (cp & 63));
    *o = (char *)u;
}

/* A string at c->i (the opening quote); its decoded bytes into *out (malloc'd, NUL-ended)
 * when out is not NULL. */
static int string(jc *c, char **out, size_t *out_len)
{
    c->i++; /* the quote */
    char *d = NULL, *o = NULL;
    if (out) { /* decoded never longer than raw: each escape shrinks or keeps its bytes */
        d = o = malloc(c->n - c->i + 1);
        if (!d) return fail(c, "out of memory");
    }
    for (;;) {
        if (c->i >= c->n) {
            free(d);
            return fail(c, "a string that does not end");
        }
        const unsigned char b = c->s[c->i];
        if (b == '"') {
            c->i++;
            break;
        }
        if (b < 0x20) {
            free(d);
            return fail(c, b ? "a control character inside a string (escape it)"
                             : "a NUL byte inside a string");
        }
        if (b == '\\') {
            if (c->i + 1 >= c->n) {
                free(d);
                return fail(c, "a string that does not end");
            }
            const unsigned char e = c->s[c->i + 1];
            const char *simple = strchr("\"\\/bfnrt", e);
            if (e && simple) {
                static const char map[] = "\"\\/\b\f\n\r\t";
                if (o) *o++ = map[simple - "\"\\/bfnrt"];
                c->i += 2;
                continue;
            }
            unsigned cp, lo;
            if (e != 'u' || c->i + 6 > c->n || hex4(c->s + c->i + 2, &cp)) {
                free(d);
                return fail(c, e == 'u' ? "a \\u escape without four hex digits"
                                        : "an unknown escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
            }
            c->i += 6;
            if (cp == 0) {
                free(d);
                return fail(c, "\\u0000 (a NUL) inside a string");
            }
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(d);
                return fail(c, "a lone low surrogate \\u escape");
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) { /* a high surrogate: its low half follows */
                if (c->i + 6 > c->n || c->s[c->i] != '\\' || c->s[c->i + 1] != 'u' ||
                    hex4(c->s + c->i + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                    free(d);
                    return fail(c, "a high surrogate \\u escape without its low half");
                }
                c->i += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (o) put_utf8(&o, cp);
            continue;
        }
        const int k = utf8_len(c->s + c->i, c->n - c->i);
        if (!k) {
            free(d);
            return fail(c, "bytes that are not UTF-8 inside a string");
        }
        if (o) memcpy(o, c->s + c->i, (size_t)k), o += k;
        c->i += (size_t)k;
    }
    if (out) {
        *o = '\0';
        *out = d;
        *out_len = (size_t)(o - d);
    }
    return 0;
}

static int digits(jc *c)
{
    size_t k = c->i;
    while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') c->i++;
    return c->i > k ? 0 : -1;
}

static int number(jc *c)
{
    if (c->s[c->i] == '-') c->i++;
    if (c->i < c->n && c->s[c->i] == '0') c->i++;
    else if (digits(c)) return fail(c, "a malformed number");
    if (c->i < c->n && c->s[c->i] == '.') {
        c->i++;
        if (digits(c)) return fail(c, "a malformed number (digits after '.')");
    }
    if (c->i < c->n && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
        c->i++;
        if (c->i < c->n && (c->s[c->i] == '+' || c->s[c->i] == '-')) c->i++;
        if (digits(c)) return fail(c, "a malformed number (digits of the exponent)");
    }
    return 0;
}

static int value(jc *c);

static int object(jc *c)
{
    c->i++; /* '{' */
    char **keys = NULL;
    size_t *lens = NULL, nkeys = 0, cap = 0;
    int st = 0;
    ws(c);
    if (c->i < c->n && c->s[c->i] == '}') {
        c->i++;
        return 0;
    }
    for (;;) {
        ws(c);
        if (c->i >= c->n || c->s[c->i] != '"') {
            st = fail(c, "a key (a string) expected");
            break;
        }
        char *key;
        size_t klen;
        if ((st = string(c, &key, &klen))) break;
        snprintf(c->path[c->depth - 1], sizeof c->path[0], "\"%.*s\"", KEY_SHOWN, key);
        for (size_t k = 0; k < nkeys; k++)
            if (lens[k] == klen && !memcmp(keys[k], key, klen)) {
                free(key);
                st = fail(c, "the key appears twice in its object");
                break;
            }
        if (st) break;
        if (nkeys == cap) {
            cap = cap ? 2 * cap : 8;
            char **nk = realloc(keys, cap * sizeof *keys);
            size_t *nl = nk ? realloc(lens, cap * sizeof *lens) : NULL;
            if (nk) keys = nk;
            if (nl) lens = nl;
            if (!nk || !nl) {
                free(key);
                st = fail(c, "out of memory");
                break;
            }
        }
        keys[nkeys] = key;
        lens[nkeys++] = klen;
        ws(c);
        if (c->i >= c->n || c->s[c->i] != ':') {
            st = fail(c, "':' expected after the key");
            break;
        }
        c->i++;
        if ((st = value(c))) break;
        ws(c);
        if (c->i < c->n && c->s[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->n && c->s[c->i] == '}') {
            c->i++;
            break;
        }
        st = fail(c, "',' or '}' expected");
        break;
    }
    c->path[c->depth - 1][0] = '\0';
    for (size_t k = 0; k < nkeys; k++) free(keys[k]);
    free(keys);
    free(lens);
    return st;
}

static int array(jc *c)
{
    c->i++; /* '[' */
    ws(c);
    if (c->i < c->n && c->s[c->i] == ']') {
        c->i++;
        return 0;
    }
    for (long k = 0;; k++) {
        snprintf(c->path[c->depth - 1], sizeof c->path[0], "[%ld]", k);
        if (value(c)) return -1;
        ws(c);
        if (c->i < c->n && c->s[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->n && c->s[c->i] == ']') {
            c->i++;
            break;
        }
        return fail(c, "',' or ']' expected");
    }
    c->path[c->depth - 1][0] = '\0';
    return 0;
}

static int value(jc *c)
{
    ws(c);
    if (c->i >= c->n) return fail(c, "a value expected");
    const unsigned char b = c->s[c->i];
    if (b == '{' || b == '[') {
        if (c->depth >= MAX_DEPTH) return fail(c, "nested more than 64 deep");
        c->path[c->depth++][0] = '\0';
        int st = b == '{' ? object(c) : array(c);
        c->depth--;
        return st;
    }
    if (b == '"') return string(c, NULL, NULL);
    if (b == '-' || (b >= '0' && b <= '9')) return number(c);
    static const char *const lit[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        const size_t l = strlen(lit[k]);
        if (c->n - c->i >= l && !memcmp(c->s + c->i, lit[k], l)) {
            c->i += l;
            return 0;
        }
    }
    return fail(c, "not a JSON value");
}

int stap_json_check(const char *text, size_t len, size_t *at, char *why, size_t why_len)
{
    static jc zero;
    jc *c = malloc(sizeof *c);
    if (!c) {
        snprintf(why, why_len, "out of memory");
        *at = 0;
        return -1;
    }
    *c = zero;
    c->s = (const unsigned char *)text;
    c->n = len;
    c->why = why;
    c->why_len = why_len;
    c->at = at;
    int st = value(c);
    if (!st) {
        ws(c);
        if (c->i < c->n)
            st = fail(c, c->s[c->i] ? "text after the JSON value" : "a NUL byte after the JSON value");
    }
    free(c);
    return st;
}
