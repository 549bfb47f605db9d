/* fuzz_sigmf: SigMF metadata (stap/io/sigmf.c, stap/io/jsoncheck.c). The input is the metadata
 * file's bytes; stap_sigmf_read_meta must return a status with a message, and on success
 * fields as documented: a short NUL-free datatype, 1..2^20 channels, a finite sample rate
 * > 0 when given, a data file beside the metadata. The strict checker must agree with the
 * tree cJSON builds: a text it accepts parses (no cJSON failure behind a clean check). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "jsoncheck.h"
#include "rawio.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char meta[4096], dir[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_path("x.sigmf-meta", meta, sizeof meta);
    snprintf(dir, sizeof dir, "%s", fz_dir());
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the checker alone, on the bytes as they are */
    size_t at = 0;
    char why[320];
    const int strict = stap_json_check((const char *)data, size, &at, why, sizeof why);
    if (strict && at > size) fz_die("stap_json_check: error offset %zu past %zu bytes", at, size);
    if (strict && !why[0]) fz_die("stap_json_check: a refusal without a message");
    if (!strict) {
        cJSON *doc = cJSON_ParseWithLength((const char *)data, size);
        if (!doc) fz_die("stap_json_check accepted what cJSON cannot parse");
        cJSON_Delete(doc);
    }
    /* the reader */
    fz_write_file(meta, data, size);
    stap_sigmf_meta m;
    stap_error err;
    memset(&err, 0, sizeof err);
    int st = stap_sigmf_read_meta(meta, &m, &err);
    fz_check_status("stap_sigmf_read_meta", st, &err);
    if (st) return 0;
    stap_sigmf_meta_free(&m); /* (the fields checked below are not the freed ones) */
    if (strict) fz_die("stap_sigmf_read_meta accepted text stap_json_check refuses: %s", why);
    if (!m.datatype[0] || strlen(m.datatype) >= sizeof m.datatype)
        fz_die("datatype '%s' empty or too long", m.datatype);
    if (m.channels < 1 || m.channels > 1 << 20) fz_die("channels %lld", m.channels);
    if (m.has_rate && !(isfinite(m.sample_rate) && m.sample_rate > 0))
        fz_die("sample rate %g", m.sample_rate);
    if (strncmp(m.dataset, dir, strlen(dir)) || strchr(m.dataset + strlen(dir) + 1, '/'))
        fz_die("data file '%s' not beside the metadata", m.dataset);
    return 0;
}
