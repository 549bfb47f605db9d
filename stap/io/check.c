/* check.c: the attribute messages of a version-1 object header, checked before libhdf5
 * decodes them (h5check.h). The format is the HDF5 File Format Specification, version 2.0:
 * IV.A.1.a (version 1 object headers), IV.A.2.m (attribute), IV.A.2.b (dataspace),
 * IV.A.2.d (datatype), IV.A.2.q (continuation). */
#include "h5check.h"
#include "io_internal.h" /* stap_io_h5_file_fd */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_CHUNKS = 64, MAX_CHUNK_BYTES = 1 << 20 };
/* the largest attribute element taken: libhdf5 1.10.8 allocates one element of the stated
 * size when it copies an attribute's datatype (H5Aget_type), whatever the dataspace holds */
#define MAX_ELEMENT_BYTES ((uint64_t)1 << 24)

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; k--) v = v << 8 | p[k];
    return v;
}

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

/* One attribute message (a, n bytes): NULL when its parts fit, else what is wrong. */
static const char *attribute_ok(const unsigned char *a, size_t n, int size_len, char *why,
                                size_t wlen)
{
    if (n < 8) return "shorter than its own fields";
    const int version = a[0];
    if (version < 1 || version > 3) {
        snprintf(why, wlen, "version %d", version);
        return why;
    }
    const size_t name = (size_t)le(a + 2, 2), dt = (size_t)le(a + 4, 2), ds = (size_t)le(a + 6, 2);
    const int flags = version == 1 ? 0 : a[1];
    size_t at = version == 3 ? 9 : 8;
    const size_t dt_at = at + (version == 1 ? pad8(name) : name);
    const size_t ds_at = dt_at + (version == 1 ? pad8(dt) : dt);
    const size_t data_at = ds_at + (version == 1 ? pad8(ds) : ds);
    if (name < 1 || data_at > n) {
        snprintf(why, wlen, "a name of %zu, a datatype of %zu and a dataspace of %zu bytes in a "
                 "message of %zu", name, dt, ds, n);
        return why;
    }
    if (a[at + name - 1] != 0) return "a name without its terminating NUL";
    if (flags & 3) return NULL; /* a shared datatype or dataspace: stored elsewhere */
    if (dt < 8) {
        snprintf(why, wlen, "a datatype of %zu bytes", dt);
        return why;
    }
    /* the data: the element size times the dataspace's points must fit too */
    const unsigned char *t = a + dt_at, *s = a + ds_at;
    uint64_t elem = le(t + 4, 4);
    if (elem > MAX_ELEMENT_BYTES) { /* even empty: the datatype's copy allocates one */
        snprintf(why, wlen, "an element of %llu bytes", (unsigned long long)elem);
        return why;
    }
    if ((t[0] & 0x0f) == 8) { /* an enum: libhdf5 1.10.8 copies its values (H5Aget_type) as
                                 members x the enum's size, stored at the base type's size */
        const uint64_t base = dt >= 16 ? le(t + 12, 4) : 0;
        if (base != elem) {
            snprintf(why, wlen, "an enum of %llu-byte elements over a %llu-byte base type",
                     (unsigned long long)elem, (unsigned long long)base);
            return why;
        }
    }
    if ((t[0] & 0x0f) == 9) elem = 4 + 8 + 4; /* variable-length: a length and a heap ID */
    const int ds_version = s[0], rank = ds < 2 ? 0 : s[1];
    const size_t dims_at = ds_version == 1 ? 8 : 4;
    if (ds < 4 || rank > 32 || (ds_version != 1 && ds_version != 2) ||
        dims_at + (size_t)rank * size_len > ds) {
        snprintf(why, wlen, "a dataspace of %zu bytes for %d dimensions", ds, rank);
        return why;
    }
    uint64_t points = ds_version == 2 && s[3] == 2 ? 0 : 1; /* null dataspace: no data */
    for (int k = 0; k < rank && points; k++) {
        const uint64_t d = le(s + dims_at + (size_t)k * size_len, size_len);
        points = d && points > UINT64_MAX / d ? UINT64_MAX : points * d;
    }
    if (points && (elem > (uint64_t)n || points > ((uint64_t)n - data_at) / (elem ? elem : 1))) {
        snprintf(why, wlen, "%llu elements of %llu bytes after %zu bytes in a message of %zu",
                 (unsigned long long)points, (unsigned long long)elem, data_at, n);
        return why;
    }
    return NULL;
}

int stap_h5check_attributes(const char *path, hid_t file, const char *name, hid_t lapl,
                       stap_error *err)
{
    H5O_info_t oi;
    if (H5Oget_info_by_name2(file, name, &oi, H5O_INFO_BASIC | H5O_INFO_HDR, lapl) < 0 ||
        oi.hdr.version != 1)
        return STAP_OK; /* not there (the caller's lookups say so), or checksummed */
    hid_t fcpl = H5Fget_create_plist(file);
    size_t addr_len = 8, size_len = 8;
    hsize_t base = 0;
    if (fcpl >= 0) {
        H5Pget_sizes(fcpl, &addr_len, &size_len);
        H5Pget_userblock(fcpl, &base);
        H5Pclose(fcpl);
    }
    if (addr_len < 2 || addr_len > 8 || size_len < 2 || size_len > 8) return STAP_OK;
    int fd = stap_io_h5_file_fd(file); /* the file HDF5 read, not what the path names now */
    if (fd < 0) return STAP_OK; /* not HDF5's sec2 driver: nothing to check it with */
    char why[200] = "";
    const char *bad = NULL;
    unsigned char *buf = NULL;
    uint64_t chunk_addr[MAX_CHUNKS], chunk_len[MAX_CHUNKS];
    int nchunks = 0, nmsg = 0;
    unsigned char prefix[16];
    if (pread(fd, prefix, sizeof prefix, (off_t)(base + oi.addr)) != (ssize_t)sizeof prefix) {
        bad = "its header is past the end of the file";
    } else {
        chunk_addr[0] = base + oi.addr + 16;
        chunk_len[0] = le(prefix + 8, 4);
        nchunks = 1;
    }
    for (int c = 0; c < nchunks && !bad; c++) {
        if (chunk_len[c] > MAX_CHUNK_BYTES) {
            snprintf(why, sizeof why, "a header chunk of %llu bytes", (unsigned long long)chunk_len[c]);
            bad = why;
            break;
        }
        unsigned char *b = realloc(buf, chunk_len[c] ? chunk_len[c] : 1);
        if (!b) break;
        buf = b;
        if (pread(fd, buf, chunk_len[c], (off_t)chunk_addr[c]) != (ssize_t)chunk_len[c]) {
            bad = "a header chunk is past the end of the file";
            break;
        }
        for (size_t at = 0; at + 8 <= chunk_len[c] && !bad; nmsg++) {
            const unsigned type = (unsigned)le(buf + at, 2), size = (unsigned)le(buf + at + 2, 2);
            if (at + 8 + size > chunk_len[c]) {
                snprintf(why, sizeof why, "message %d (type %u) runs %zu bytes past its chunk", nmsg,
                         type, (size_t)(at + 8 + size - chunk_len[c]));
                bad = why;
            } else if (type == 0x0c) {
                char what[160];
                const char *w = attribute_ok(buf + at + 8, size, (int)size_len, what, sizeof what);
                if (w) {
                    snprintf(why, sizeof why, "attribute message %d: %s", nmsg, w);
                    bad = why;
                }
            } else if (type == 0x10 && size >= addr_len + size_len) {
                const uint64_t a = le(buf + at + 8, (int)addr_len) + base;
                const uint64_t l = le(buf + at + 8 + addr_len, (int)size_len);
                int seen = 0;
                for (int k = 0; k < nchunks; k++) seen |= chunk_addr[k] == a;
                if (!seen && nchunks < MAX_CHUNKS) {
                    chunk_addr[nchunks] = a;
                    chunk_len[nchunks++] = l;
                }
            }
            at += 8 + size;
        }
    }
    free(buf);
    close(fd);
    if (!bad) return STAP_OK;
    return stap_fail(err, STAP_EFORMAT, "'%s' in '%s': its object header is damaged (%s); refused",
                     name, path, bad);
}
