/* array_io.c: the steering's physical units in files — the looks (azimuth, elevation, the
 * target's Doppler) written as attributes of a result's /steering (docs/file-format.md). */
#include "io_internal.h"

#include <math.h>
#include <stdlib.h>

int stap_io_looks_check(const stap_look *looks, int B, const char *path, stap_error *err)
{
    if (!looks) return STAP_OK;
    int with = 0;
    for (int b = 0; b < B; b++) {
        if (!(fabs(looks[b].az_deg) <= 180 && fabs(looks[b].el_deg) <= 90))
            return stap_fail(err, STAP_EINVAL, "stap_result_write('%s'): look %d (az %g, el %g "
                             "degrees) is out of range", path, b, looks[b].az_deg, looks[b].el_deg);
        with += !isnan(looks[b].doppler);
    }
    if (with != 0 && with != B)
        return stap_fail(err, STAP_EINVAL, "stap_result_write('%s'): %d of the %d looks have a "
                         "Doppler: all or none", path, with, B);
    return STAP_OK;
}

void stap_io_w_looks(h5w *w, hid_t steering, const stap_look *looks, int B, int D,
                     const stap_radar_meta *m)
{
    if (!looks || w->st) return;
    double *v = malloc(sizeof(double) * B);
    int *bin = malloc(sizeof(int) * B);
    if (!v || !bin) {
        free(v);
        free(bin);
        w->st = stap_fail(w->err, STAP_ENOMEM, "out of memory writing '%s'", w->path);
        return;
    }
    for (int b = 0; b < B; b++) v[b] = looks[b].az_deg;
    stap_io_w_attr_n(w, steering, "az_deg", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, B, v);
    for (int b = 0; b < B; b++) v[b] = looks[b].el_deg;
    stap_io_w_attr_n(w, steering, "el_deg", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, B, v);
    if (!isnan(looks[0].doppler)) {
        for (int b = 0; b < B; b++) v[b] = looks[b].doppler;
        stap_io_w_attr_n(w, steering, "doppler_normalized", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, B, v);
        for (int b = 0; b < B; b++) bin[b] = stap_doppler_bin(looks[b].doppler, D);
        stap_io_w_attr_n(w, steering, "doppler_bin", H5T_STD_I32LE, H5T_NATIVE_INT, B, bin);
        if (m && m->has_prf) {
            for (int b = 0; b < B; b++) v[b] = looks[b].doppler * m->prf_hz;
            stap_io_w_attr_n(w, steering, "doppler_hz", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, B, v);
        }
    }
    free(v);
    free(bin);
}
