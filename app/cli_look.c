/* cli_look.c: --look, --sector, --doppler-hz, --doppler-mps (cli_look.h). */
#include "cli_look.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "AZ" or "AZ,EL" (len characters of s) into *l */
static int parse_one(const char *flag, const char *s, size_t len, stap_look *l)
{
    char buf[128], *comma;
    if (len == 0 || len >= sizeof buf)
        return cli_error(EXIT_USAGE, "%s expects AZ[,EL] in degrees (got '%.*s')", flag, (int)len, s), -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    l->el_deg = 0;
    l->doppler = NAN;
    if ((comma = strchr(buf, ','))) {
        *comma = '\0';
        if (cli_double(flag, comma + 1, -90, 90, &l->el_deg)) return -1;
    }
    return cli_double(flag, buf, -180, 180, &l->az_deg);
}

int cli_parse_look(const cli_opt *o, const char *arg)
{
    cli_look *l = o->value;
    for (const char *s = arg;;) {
        const size_t len = strcspn(s, ";");
        if (l->n == CLI_MAX_LOOKS) {
            cli_error(EXIT_USAGE, "--look: at most %d beams", CLI_MAX_LOOKS);
            return -1;
        }
        if (parse_one("--look", s, len, &l->looks[l->n])) return -1;
        l->n++;
        if (!s[len]) return 0;
        s += len + 1;
    }
}

int cli_parse_sector(const cli_opt *o, const char *arg)
{
    cli_look *l = o->value;
    const char *colon = strchr(arg, ':');
    stap_look a, b;
    if (!colon) {
        cli_error(EXIT_USAGE, "--sector expects AZ1:AZ2[,EL] in degrees (got '%s')", arg);
        return -1;
    }
    if (parse_one("--sector", arg, (size_t)(colon - arg), &a) ||
        parse_one("--sector", colon + 1, strlen(colon + 1), &b))
        return -1;
    if (a.el_deg != 0) {
        cli_error(EXIT_USAGE, "--sector expects AZ1:AZ2[,EL]: the elevation comes last (got '%s')", arg);
        return -1;
    }
    l->sector[0] = a.az_deg;
    l->sector[1] = b.az_deg;
    l->sector[2] = b.el_deg;
    l->sector_given = 1;
    return 0;
}

int cli_look_given(const cli_look *l) { return l->n > 0 || l->sector_given; }

int cli_look_check(const cli_look *l, int beams_given)
{
    if (l->n > 0 && l->sector_given) return cli_error(EXIT_USAGE, "--look and --sector: give one of them");
    if (l->n > 0 && beams_given)
        return cli_error(EXIT_USAGE, "--beams with --look: the beams are the %d looks given (--beams "
                         "counts the beams of --sector)", l->n);
    if (l->hz_given && l->mps_given) return cli_error(EXIT_USAGE, "--doppler-hz and --doppler-mps: give one of them");
    if ((l->hz_given || l->mps_given) && !cli_look_given(l))
        return cli_error(EXIT_USAGE, "%s steers the beams of --look or --sector: give one of them",
                         l->hz_given ? "--doppler-hz" : "--doppler-mps");
    return EXIT_OK;
}

/* the Doppler asked, in cycles per pulse aliased into [-1/2, 1/2), or NAN */
static int look_doppler(const cli_look *l, const stap_radar_meta *m, const char *name, double *f)
{
    *f = NAN;
    if (!l->hz_given && !l->mps_given) return EXIT_OK;
    const char *flag = l->hz_given ? "--doppler-hz" : "--doppler-mps";
    if (!m->has_prf)
        return cli_error(EXIT_USAGE, "%s needs the pulse repetition frequency: %s has no /radar prf_hz",
                         flag, name);
    if (l->mps_given && !m->has_carrier)
        return cli_error(EXIT_USAGE, "--doppler-mps needs the carrier: %s has no /radar "
                         "carrier_frequency_hz (--doppler-hz takes the Doppler itself)", name);
    const double c0 = 299792458.0;
    const double hz = l->hz_given ? l->doppler_hz : 2.0 * l->doppler_mps * m->carrier_frequency_hz / c0;
    double v = hz / m->prf_hz;
    v -= floor(v + 0.5); /* aliased: what the pulses sample */
    *f = v;
    return EXIT_OK;
}

int cli_look_apply(const cli_look *l, stap_input *in, const stap_config *cfg, const char *name)
{
    const int geometry = in->array_position || in->array_calibration;
    /* an input's own /steering is its steering, whatever its /array says */
    if (!cli_look_given(l) && (!geometry || (in->steering && !in->looks))) return EXIT_OK;
    if (in->steering && !in->looks)
        return cli_error(EXIT_USAGE, "%s has its own /steering (%d beams): --look and --sector would "
                         "replace it; give neither, or an input without /steering", name,
                         in->steering_beams);
    double f;
    int st = look_doppler(l, &in->meta, name, &f);
    if (st) return st;
    const int B = l->n > 0 ? l->n : cfg->beams, N = stap_dof(cfg); /* sector, default: --beams */
    stap_look *looks = malloc(sizeof *looks * B);
    stap_cf32 *V = malloc(sizeof *V * (size_t)B * N);
    if (!looks || !V) {
        free(looks);
        free(V);
        return cli_error(EXIT_PROCESSING, "out of memory for %d steering vectors", B);
    }
    if (l->n > 0) {
        memcpy(looks, l->looks, sizeof *looks * B);
    } else if (l->sector_given) {
        stap_looks_sector(l->sector[0], l->sector[1], l->sector[2], B, looks);
    } else { /* the default beams' u_b through the file's geometry: azimuth asin(u_b) */
        for (int b = 0; b < B; b++)
            looks[b] = (stap_look){asin(stap_beam_u(b, B)) * 180.0 / M_PI, 0, NAN};
    }
    for (int b = 0; b < B; b++) looks[b].doppler = f;
    const stap_array arr = {in->channels, in->array_position, in->array_calibration};
    stap_error err;
    if ((st = stap_steering_from_looks(cfg, geometry ? &arr : NULL, looks, B, V, &err))) {
        free(looks);
        free(V);
        /* what the options ask does not fit the run (a Doppler for adpca): usage */
        if (st == STAP_EINVAL) return cli_error(EXIT_USAGE, "%s", cli_flags_in(&err));
        stap_error_prefix(&err, "%s", name);
        return cli_fail(&err);
    }
    free(in->steering); /* this function's own, from an earlier CPI's call */
    free(in->looks);
    in->steering = V;
    in->looks = looks;
    in->steering_beams = B;
    in->steering_len = N;
    return EXIT_OK;
}
