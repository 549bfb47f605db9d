/* h5out.c: a file being written (h5out.h) — its temporary, the blocks allocated ahead of
 * HDF5's writes, publication or abandonment. */
#include "io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a file being written ------------------------------------------------------------
 * Every file rtstap writes with HDF5 goes through h5_out (h5out.h): a temporary beside the
 * output (stap_atomic_begin), published by a rename once complete. A full disk must end in
 * a clean error, and Debian's HDF5 1.10.8 does not survive a failed write:
 *  - a failed flush (H5Fclose's) leaves its metadata cache's skip list switched on, every
 *    later flush fails with "slist already enabled?", the file stays open, and HDF5's
 *    shutdown at exit crashes in H5F__close_cb (SIGSEGV: `run` on a full disk did that);
 *  - a failed write of a chunk leaks blocks of HDF5's free lists, so that its shutdown
 *    loops ("HDF5: infinite loop closing library" and a line of package names).
 * So HDF5 is never let write where the disk has no room: the temporary's blocks are
 * allocated ahead of HDF5's end of file (fallocate, FALLOC_FL_KEEP_SIZE: the file's size
 * is HDF5's alone) before each write that can allocate — the end of allocated space plus
 * what the write needs plus a margin — and a full disk fails that fallocate, in our code,
 * before HDF5 has written anything there. A file system without fallocate gets a reserve
 * instead (a second temporary of H5IO_RESERVE_BYTES, released just before H5Fclose, so
 * that the close finds room for its metadata). A write that fails all the same abandons
 * the file: the temporary is truncated to nothing first (its blocks freed), then closed
 * and removed. */
#define H5IO_RESERVE_BYTES ((off_t)4 << 20)
#define H5IO_AHEAD_BYTES ((hsize_t)1 << 20) /* beyond every write's own bytes */

const char *stap_io_h5_error_detail(char *buf, size_t len) { return stap_io_h5_detail(buf, len); }

static void reserve_release(h5_out *o)
{
    if (o->reserve[0]) stap_atomic_abort(o->reserve);
    o->reserve[0] = '\0';
}

RT_INTERNAL int stap_io_tmp_make(const char *path, char *tmp, size_t tmplen, stap_error *err);

static int out_fail_space(h5_out *o, int e, stap_error *err)
{
    return stap_fail(err, STAP_EIO, "cannot write '%s': %s", o->path, strerror(e));
}

/* 1 when a file of `size` bytes passes the file size limit (RLIMIT_FSIZE): fallocate's
 * KEEP_SIZE does not see the limit, and HDF5's write past it would fail (EFBIG) with the
 * consequences above; so it is checked before HDF5 writes, with the same margin. */
static int over_size_limit(off_t size)
{
    struct rlimit fl;
    return getrlimit(RLIMIT_FSIZE, &fl) == 0 && fl.rlim_cur != RLIM_INFINITY &&
           (rlim_t)size > fl.rlim_cur;
}

int stap_h5out_begin(h5_out *o, const char *path, stap_write_mode mode, stap_error *err)
{
    o->path = path;
    o->mode = mode;
    o->tmp[0] = o->reserve[0] = '\0';
    o->fd = -1;
    o->reserved = 0;
    if (stap_atomic_begin(path, o->tmp, sizeof o->tmp, mode, err)) return err ? err->code : STAP_EIO;
    o->fd = open(o->tmp, O_WRONLY | O_CLOEXEC);
    int e = o->fd < 0 ? errno : over_size_limit((off_t)H5IO_AHEAD_BYTES) ? EFBIG : 0;
    if (!e && fallocate(o->fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)H5IO_AHEAD_BYTES) == 0) {
        o->reserved = (off_t)H5IO_AHEAD_BYTES;
        return STAP_OK;
    }
    if (!e) e = errno;
    if (e == ENOSPC || e == EDQUOT || e == EFBIG) {
        stap_h5out_finish(o, -1, 1, NULL);
        return out_fail_space(o, e, err);
    }
    /* no fallocate here (or no descriptor): a reserve the close can use */
    int fd = stap_io_tmp_make(path, o->reserve, sizeof o->reserve, err);
    if (fd < 0) {
        stap_h5out_finish(o, -1, 1, NULL);
        return err ? err->code : STAP_EIO;
    }
    e = posix_fallocate(fd, 0, H5IO_RESERVE_BYTES);
    close(fd);
    if (e == EINVAL || e == EOPNOTSUPP || e == ENODEV || e == ESPIPE) {
        reserve_release(o); /* a file system that cannot reserve at all: written as it is */
    } else if (e) {
        stap_h5out_finish(o, -1, 1, NULL);
        return out_fail_space(o, e, err);
    }
    return STAP_OK;
}

hid_t stap_h5out_create(h5_out *o, stap_error *err)
{
    char detail[256];
    hid_t fapl = stap_io_strong_fapl();
    hid_t file = H5Fcreate(o->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0) stap_io_h5_detail(detail, sizeof detail); /* before the close clears the stack */
    CLOSE_PLIST(fapl);
    if (file < 0)
        stap_fail(err, STAP_EIO, "cannot create '%s' (as '%s'): %s", o->path, o->tmp, detail);
    return file;
}

int stap_h5out_reserve(h5_out *o, hid_t file, size_t bytes, stap_error *err)
{
    if (file < 0) return STAP_OK;
    hsize_t eoa = 0;
    if (H5Fget_filesize(file, &eoa) < 0) return STAP_OK;
    const off_t want = (off_t)(eoa + bytes + H5IO_AHEAD_BYTES);
    /* a file size limit: checked before every write, within the blocks allocated ahead too */
    if (over_size_limit(want)) return out_fail_space(o, EFBIG, err);
    if (!o->reserved || want <= o->reserved) return STAP_OK; /* no fallocate: the reserve file stands in */
    /* in steps of an eighth more, at least 4 MiB: few calls for a file written CPI by CPI */
    off_t step = o->reserved / 8 > ((off_t)4 << 20) ? o->reserved / 8 : ((off_t)4 << 20);
    off_t to = want > o->reserved + step ? want : o->reserved + step;
    if (fallocate(o->fd, FALLOC_FL_KEEP_SIZE, 0, to) != 0 &&
        (to == want || fallocate(o->fd, FALLOC_FL_KEEP_SIZE, 0, to = want) != 0))
        return out_fail_space(o, errno, err);
    o->reserved = to;
    return STAP_OK;
}

/* Abandon the file: free its blocks and the reserve's, then close and remove it. */
static void out_discard(h5_out *o, hid_t file)
{
    if (o->fd >= 0) {
        if (ftruncate(o->fd, 0) != 0) { /* nothing more to free */ }
        close(o->fd);
        o->fd = -1;
    }
    reserve_release(o);
    if (file >= 0) H5Fclose(file);
    if (o->tmp[0]) stap_atomic_abort(o->tmp);
    o->tmp[0] = '\0';
}

int stap_h5out_finish(h5_out *o, hid_t file, int failed, stap_error *err)
{
    char detail[256];
    if (failed) {
        out_discard(o, file);
        return err ? err->code : STAP_EIO;
    }
    reserve_release(o);
    if (file >= 0 && H5Fclose(file) < 0) {
        int st = stap_fail(err, STAP_EIO, "cannot write '%s': %s", o->path,
                           stap_io_h5_detail(detail, sizeof detail));
        out_discard(o, -1);
        return st;
    }
    if (o->fd >= 0) { /* the blocks allocated ahead that HDF5 did not use */
        struct stat sb;
        if (o->reserved && fstat(o->fd, &sb) == 0 && o->reserved > sb.st_size &&
            fallocate(o->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, sb.st_size,
                      o->reserved - sb.st_size) != 0) { /* kept: no harm but space */ }
        close(o->fd);
        o->fd = -1;
    }
    int st = stap_atomic_commit(o->tmp, o->path, o->mode, err);
    o->tmp[0] = '\0';
    return st;
}
