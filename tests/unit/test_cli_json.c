/* test_cli_json: the JSON reports of rtstap (app/cli_json.c) stay valid JSON whatever they
 * hold — NaN and infinities become null, strings with quotes, backslashes, control
 * characters and bytes that are not UTF-8 (a hostile path or host name) are escaped or
 * replaced — and are written atomically, refusing or (-f) replacing an existing file. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_json.h"
#include "testutil.h"

/* the whole text is valid UTF-8 */
static int valid_utf8(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = cli_utf8_sequence(p);
        if (!n) return 0;
        p += n;
    }
    return 1;
}

static void test_sequences(void)
{
    static const struct {
        const char *s;
        int n;
    } cases[] = {
        {"a", 1},           {"\x7f", 1},             {"\xc3\xa9", 2},         /* e acute */
        {"\xe2\x82\xac", 3}, {"\xf0\x9f\x98\x80", 4}, {"\xf4\x8f\xbf\xbf", 4}, /* U+10FFFF */
        {"\x80", 0},        {"\xbf", 0},             {"\xc0\xaf", 0},         /* overlong '/' */
        {"\xc1\xbf", 0},    {"\xe0\x80\xaf", 0},     {"\xed\xa0\x80", 0},     /* surrogate */
        {"\xf0\x80\x80\xaf", 0}, {"\xf4\x90\x80\x80", 0}, {"\xf5\x80\x80\x80", 0},
        {"\xff", 0},        {"\xe2\x82", 0},         {"\xe2\x82x", 0},        /* truncated */
        {"\xc3", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int n = cli_utf8_sequence((const unsigned char *)cases[i].s);
        CHECK(n == cases[i].n, "case %zu: sequence length %d, expected %d", i, n, cases[i].n);
    }
}

static void test_sanitize(void)
{
    static const char hostile[] = "a\"b\\c\nd\te\x01" "f\x7f g\xff\xfeh \xe2\x82\xac \xed\xa0\x80 /x.h5";
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "nan", NAN);
    cJSON_AddNumberToObject(doc, "inf", INFINITY);
    cJSON_AddNumberToObject(doc, "minus_inf", -INFINITY);
    cJSON_AddNumberToObject(doc, "finite", 1.5e-300);
    cJSON_AddStringToObject(doc, "path", hostile);
    cJSON_AddNumberToObject(doc, "key\xff", 3); /* a key is copied: sanitized too */
    cJSON *arr = cJSON_AddArrayToObject(doc, "values");
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(NAN));
    cJSON_AddItemToArray(arr, cJSON_CreateString("\xc0\xaf"));
    cJSON *inner = cJSON_CreateObject();
    cJSON_AddNumberToObject(inner, "deep", -NAN);
    cJSON_AddItemToArray(arr, inner);

    cli_json_sanitize(doc);
    char *text = cJSON_Print(doc);
    CHECK(text && valid_utf8(text), "not valid UTF-8: %s", text ? text : "(null)");
    CHECK(text && !strstr(text, ":\tnan") && !strstr(text, "inf,") && !strstr(text, "-nan"),
          "a non-finite number token: %s", text ? text : "");
    cJSON *back = text ? cJSON_Parse(text) : NULL;
    CHECK(back != NULL, "the text does not parse: %s", text ? text : "");
    if (back) {
        const char *nulls[] = {"nan", "inf", "minus_inf"};
        for (int i = 0; i < 3; i++)
            CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(back, nulls[i])), "%s not null",
                  nulls[i]);
        cJSON *f = cJSON_GetObjectItemCaseSensitive(back, "finite");
        CHECK(cJSON_IsNumber(f) && f->valuedouble == 1.5e-300, "finite number changed");
        cJSON *p = cJSON_GetObjectItemCaseSensitive(back, "path");
        static const char want[] = "a\"b\\c\nd\te\x01" "f\x7f g\xef\xbf\xbd\xef\xbf\xbdh \xe2\x82\xac "
                                   "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd /x.h5";
        CHECK(cJSON_IsString(p) && !strcmp(p->valuestring, want), "path came back as '%s'",
              cJSON_IsString(p) ? p->valuestring : "?");
        CHECK(cJSON_GetObjectItemCaseSensitive(back, "key\xef\xbf\xbd") != NULL, "key not fixed");
        cJSON *v = cJSON_GetObjectItemCaseSensitive(back, "values");
        CHECK(cJSON_GetArraySize(v) == 3 && cJSON_IsNull(cJSON_GetArrayItem(v, 0)) &&
                  !strcmp(cJSON_GetArrayItem(v, 1)->valuestring, "\xef\xbf\xbd\xef\xbf\xbd") &&
                  cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(v, 2), "deep")),
              "array items not sanitized");
    }
    cJSON_Delete(back);
    cJSON_free(text);
    cJSON_Delete(doc);
}

static int file_text(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    return 0;
}

static void test_write(const char *dir)
{
    char path[4200], buf[4096];
    snprintf(path, sizeof path, "%s/report.json", dir);
    FILE *f = fopen(path, "w");
    fputs("old\n", f);
    fclose(f);
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "x", NAN);
    stap_error err;
    int st = cli_json_write(path, doc, STAP_WRITE_NEW, &err);
    CHECK(st == STAP_EIO && strstr(err.msg, "already exists") && file_text(path, buf, sizeof buf) == 0 &&
              !strcmp(buf, "old\n"),
          "an existing file: %d %s", st, err.msg);
    st = cli_json_write(path, doc, STAP_WRITE_REPLACE, &err);
    CHECK(st == STAP_OK && file_text(path, buf, sizeof buf) == 0 && strstr(buf, "\"x\":\tnull"),
          "replace: %d %s: '%s'", st, err.msg, buf);
    unlink(path);
    cJSON_Delete(doc);
}

int main(void)
{
    char dir[4096];
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_cli_json.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "test_cli_json: cannot make a temporary directory: %s\n", strerror(errno));
        return 1;
    }
    test_sequences();
    test_sanitize();
    test_write(dir);
    rmdir(dir);
    if (tc_failures) {
        fprintf(stderr, "test_cli_json: %d failure(s)\n", tc_failures);
        return 1;
    }
    printf("test_cli_json: all checks passed\n");
    return 0;
}
