/* sigmf.c: SigMF metadata (rawio.h: stap_sigmf_read_meta) — strict JSON (jsoncheck.c), then
 * what rtstap takes from it, each problem named by its key. */
#include "rawio.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsoncheck.h"

#define SIGMF_MAX_BYTES ((size_t)16 << 20)

/* The metadata file's bytes (at most SIGMF_MAX_BYTES), without blocking on a FIFO. */
static char *slurp(const char *path, size_t *len, stap_error *err)
{
    int fd = stap_open_regular(path, err);
    if (fd < 0) return NULL;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || (unsigned long long)sb.st_size > SIGMF_MAX_BYTES) {
        close(fd);
        stap_fail(err, STAP_EIO, "cannot read '%s': %s", path, "larger than 16 MiB (not metadata)");
        return NULL;
    }
    const size_t want = (size_t)sb.st_size;
    char *buf = malloc(want + 1);
    size_t n = 0;
    int e = buf ? 0 : ENOMEM;
    while (!e && n < want) { /* (a file that grows meanwhile is read as it was) */
        ssize_t k = read(fd, buf + n, want - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) e = errno;
        if (k <= 0) break;
        n += (size_t)k;
    }
    close(fd);
    if (e) {
        free(buf);
        stap_fail(err, STAP_EIO, "cannot read '%s': %s", path, strerror(e));
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* A whole number >= 0 (a JSON number without fraction, up to 2^53) at key `name` of obj:
 * 0 absent, 1 set, -1 anything else. */
static int count_at(const cJSON *obj, const char *name, unsigned long long *v)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!it) return 0;
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < 0 ||
        it->valuedouble > 9007199254740992.0 || it->valuedouble != floor(it->valuedouble))
        return -1;
    *v = (unsigned long long)it->valuedouble;
    return 1;
}

/* "JSON text" of a value, short, for messages */
static void shown(const cJSON *it, char *buf, size_t len)
{
    char *t = it ? cJSON_PrintUnformatted(it) : NULL;
    snprintf(buf, len, "%.60s%s", t ? t : "?", t && strlen(t) > 60 ? "..." : "");
    cJSON_free(t);
}

/* The captures (one centre frequency if they agree; header bytes only before the first;
 * whether they mark the pulses) and the annotations of doc, kept as JSON text. */
static int read_captures(const cJSON *doc, const char *meta_path, stap_sigmf_meta *m, stap_error *err)
{
    int st = STAP_OK;
    char val[80];
    /* captures: one centre frequency if they agree; header bytes only before the first */
    const cJSON *caps = cJSON_GetObjectItemCaseSensitive(doc, "captures");
    if (caps && !cJSON_IsArray(caps)) {
        st = stap_fail(err, STAP_EFORMAT, "'%s': \"captures\" is not an array", meta_path);
        return st;
    }
    int k = 0;
    const cJSON *cap;
    unsigned long long first_gap = 0, prev = 0;
    int pulses = 1; /* so far every capture starts k x the first gap */
    cJSON_ArrayForEach(cap, caps) {
        unsigned long long hb = 0, start = 0;
        const int has_start = count_at(cap, "core:sample_start", &start);
        if (has_start < 0 || (k > 0 && has_start && start <= prev)) {
            shown(cJSON_GetObjectItemCaseSensitive(cap, "core:sample_start"), val, sizeof val);
            st = stap_fail(err, STAP_EFORMAT, "'%s': \"captures\"[%d].\"core:sample_start\" %s: "
                           "expected a whole number of samples, after the previous capture's",
                           meta_path, k, val);
            return st;
        }
        if (k == 1) first_gap = start;
        pulses = pulses && has_start && start == (unsigned long long)k * (k ? first_gap : 0) &&
                 (k == 0 || first_gap > 0);
        prev = start;
        if (!cJSON_IsObject(cap)) {
            st = stap_fail(err, STAP_EFORMAT, "'%s': \"captures\"[%d] is not an object", meta_path, k);
            return st;
        }
        const cJSON *fr = cJSON_GetObjectItemCaseSensitive(cap, "core:frequency");
        if (count_at(cap, "core:header_bytes", &hb) < 0) {
            shown(cJSON_GetObjectItemCaseSensitive(cap, "core:header_bytes"), val, sizeof val);
            st = stap_fail(err, STAP_EFORMAT, "'%s': \"captures\"[%d].\"core:header_bytes\" %s: "
                           "expected a whole number of bytes", meta_path, k, val);
            return st;
        }
        if (fr && (!cJSON_IsNumber(fr) || !isfinite(fr->valuedouble))) {
            shown(fr, val, sizeof val);
            st = stap_fail(err, STAP_EFORMAT, "'%s': \"captures\"[%d].\"core:frequency\" %s: expected "
                           "a number", meta_path, k, val);
            return st;
        }
        if (hb > 0 && k > 0) {
            st = stap_fail(err, STAP_EFORMAT, "'%s': \"captures\"[%d].\"core:header_bytes\": bytes "
                           "between the samples are not read (only a header before the first "
                           "capture)", meta_path, k);
            return st;
        }
        if (k == 0) m->header_bytes = hb;
        if (fr) {
            if (m->has_freq && fr->valuedouble != m->frequency) m->freq_conflict = 1;
            m->has_freq = 1;
            m->frequency = fr->valuedouble;
        }
        k++;
    }
    m->captures = k;
    m->pulse_samples = pulses && k >= 2 ? (long long)first_gap : 0;
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(doc, "annotations");
    if (ann && !cJSON_IsArray(ann)) {
        st = stap_fail(err, STAP_EFORMAT, "'%s': \"annotations\" is not an array", meta_path);
        return st;
    }
    m->annotations = ann ? cJSON_GetArraySize(ann) : 0;
    if ((caps && !(m->captures_json = cJSON_PrintUnformatted(caps))) ||
        (ann && !(m->annotations_json = cJSON_PrintUnformatted(ann))))
        st = stap_fail(err, STAP_ENOMEM, "out of memory keeping the captures and annotations of '%s'",
                       meta_path);
    return st;
}

int stap_sigmf_read_meta(const char *meta_path, stap_sigmf_meta *m, stap_error *err)
{
    memset(m, 0, sizeof *m);
    m->channels = 1;
    const char *suffix = ".sigmf-meta";
    const size_t len = strlen(meta_path), sl = strlen(suffix);
    if (len <= sl || strcmp(meta_path + len - sl, suffix))
        return stap_fail(err, STAP_EINVAL, "SigMF metadata '%s' does not end in .sigmf-meta", meta_path);
    size_t n = 0;
    char *text = slurp(meta_path, &n, err);
    if (!text) return err ? err->code : STAP_EIO;
    char why[320], val[80];
    size_t at = 0;
    if (stap_json_check(text, n, &at, why, sizeof why)) {
        free(text);
        return stap_fail(err, STAP_EFORMAT, "'%s' is not strict JSON: %s (byte %zu)", meta_path, why, at);
    }
    int st = STAP_OK;
    cJSON *doc = cJSON_ParseWithLength(text, n);
    const cJSON *global = doc ? cJSON_GetObjectItemCaseSensitive(doc, "global") : NULL;
    if (!doc) {
        st = stap_fail(err, STAP_ENOMEM, "out of memory parsing '%s'", meta_path);
        goto done;
    }
    if (!cJSON_IsObject(global)) {
        st = stap_fail(err, STAP_EFORMAT, "'%s': \"global\" is missing or not an object (SigMF "
                       "metadata)", meta_path);
        goto done;
    }
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(global, "core:datatype");
    if (!cJSON_IsString(dt) || !dt->valuestring[0] ||
        strlen(dt->valuestring) >= sizeof m->datatype) {
        shown(dt, val, sizeof val);
        st = stap_fail(err, STAP_EFORMAT, "'%s': \"global\".\"core:datatype\" %s: expected a short "
                       "string such as \"ci16_le\"", meta_path, dt ? val : "is missing");
        goto done;
    }
    snprintf(m->datatype, sizeof m->datatype, "%s", dt->valuestring);
    const cJSON *mo = cJSON_GetObjectItemCaseSensitive(global, "core:metadata_only");
    if (mo && !cJSON_IsBool(mo)) {
        shown(mo, val, sizeof val);
        st = stap_fail(err, STAP_EFORMAT, "'%s': \"global\".\"core:metadata_only\" %s: expected true "
                       "or false", meta_path, val);
        goto done;
    }
    if (cJSON_IsTrue(mo)) {
        st = stap_fail(err, STAP_EFORMAT, "'%s': \"global\".\"core:metadata_only\" is true: it has no "
                       "samples", meta_path);
        goto done;
    }
    unsigned long long ch = 1;
    if (count_at(global, "core:num_channels", &ch) < 0 || ch < 1 || ch > 1 << 20) {
        shown(cJSON_GetObjectItemCaseSensitive(global, "core:num_channels"), val, sizeof val);
        st = stap_fail(err, STAP_EFORMAT, "'%s': \"global\".\"core:num_channels\" %s: expected a whole "
                       "number from 1 to 1048576", meta_path, val);
        goto done;
    }
    m->channels = (long long)ch;
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(global, "core:sample_rate");
    if (rate) {
        if (!cJSON_IsNumber(rate) || !isfinite(rate->valuedouble) || rate->valuedouble <= 0) {
            shown(rate, val, sizeof val);
            st = stap_fail(err, STAP_EFORMAT, "'%s': \"global\".\"core:sample_rate\" %s: expected a "
                           "number > 0", meta_path, val);
            goto done;
        }
        m->has_rate = 1;
        m->sample_rate = rate->valuedouble;
    }
    const cJSON *prf = cJSON_GetObjectItemCaseSensitive(global, "rtstap:prf");
    if (prf) {
        if (!cJSON_IsNumber(prf) || !isfinite(prf->valuedouble) || prf->valuedouble <= 0) {
            shown(prf, val, sizeof val);
            st = stap_fail(err, STAP_EFORMAT, "'%s': \"global\".\"rtstap:prf\" %s: expected the "
                           "pulse repetition frequency in Hz, a number > 0", meta_path, val);
            goto done;
        }
        m->has_prf = 1;
        m->prf = prf->valuedouble;
    }
    /* the data file: beside the metadata, its name or global core:dataset (a file name) */
    const cJSON *ds = cJSON_GetObjectItemCaseSensitive(global, "core:dataset");
    const char *slash = strrchr(meta_path, '/');
    const int dlen = slash ? (int)(slash - meta_path) + 1 : 0;
    if (ds) {
        if (!cJSON_IsString(ds) || !ds->valuestring[0] || strchr(ds->valuestring, '/') ||
            !strcmp(ds->valuestring, "..") || !strcmp(ds->valuestring, ".")) {
            shown(ds, val, sizeof val);
            st = stap_fail(err, STAP_EFORMAT, "'%s': \"global\".\"core:dataset\" %s: expected the name "
                           "of a file beside the metadata (no '/')", meta_path, val);
            goto done;
        }
        snprintf(m->dataset, sizeof m->dataset, "%.*s%s", dlen, meta_path, ds->valuestring);
    } else {
        snprintf(m->dataset, sizeof m->dataset, "%.*s.sigmf-data", (int)(len - sl), meta_path);
    }
    st = read_captures(doc, meta_path, m, err);
done:
    cJSON_Delete(doc);
    free(text);
    if (st) stap_sigmf_meta_free(m);
    return st;
}

void stap_sigmf_meta_free(stap_sigmf_meta *m)
{
    if (!m) return;
    cJSON_free(m->captures_json);
    cJSON_free(m->annotations_json);
    m->captures_json = m->annotations_json = NULL;
}
