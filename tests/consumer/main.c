/* consumer: a program outside rtstap's tree built against the installed library (CMake's
 * find_package(rtstap) or pkg-config; tests/consumer/run.sh). It uses the public headers
 * only: writes a cube of white noise and one target to an HDF5 input file and reads it back
 * (h5io.h), runs it through a CPU engine with the easy preset (engine.h), and checks that
 * the target is among the CFAR detections.  usage: consumer FILE.h5 (FILE must not exist) */
#include <rtstap/rtstap.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* the target: beam 8 of the easy preset's 16 looks at u = -1 + 17/16; Doppler bin 32 of
 * 128 is 0.25 cycles per pulse; range cell 161 is not a training cell (those are even) */
enum { BEAM = 8, BIN = 32, CELL = 161 };
static const double TWO_PI = 6.283185307179586;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void) /* (0, 1), xorshift64* */
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return ((rng * 2685821657736338717ull >> 11) + 0.5) * 0x1.0p-53;
}

/* the stream's sink: each CPI's detections, as the one engine found them */
typedef struct tally {
    size_t expect;   /* the one-CPI run's detection count */
    long long cpis, same;
} tally;
static int each_cpi(void *user, const stap_engine *e, const stap_cpi_result *r, long long input_cpi,
                    stap_error *err)
{
    tally *t = user;
    (void)e;
    (void)err;
    t->cpis++;
    t->same += r->detection_count == t->expect && input_cpi == r->cpi;
    return STAP_OK;
}

static int fail(const char *what, const stap_error *err)
{
    fprintf(stderr, "consumer: %s: %s (%s)\n", what, err->msg, stap_status_name(err->code));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: consumer FILE.h5\n");
        return 2;
    }
    stap_error err;
    stap_config cfg;
    stap_config_defaults(&cfg);
    stap_preset_config(STAP_PRESET_EASY, &cfg);
    cfg.backend = STAP_BACKEND_CPU;
    const int C = cfg.channels, P = cfg.pulses, R = cfg.range_gates;
    const double u = -1.0 + (2.0 * BEAM + 1) / cfg.beams, f = (double)BIN / P;

    /* unit-power complex noise, and the target at 0 dB per element and pulse */
    stap_input in = {.channels = C, .pulses = P, .range_gates = R};
    in.iq = malloc(sizeof(stap_cf32) * (size_t)C * P * R);
    if (!in.iq) return 1;
    for (size_t i = 0; i < (size_t)C * P * R; i++) {
        const double a = sqrt(-log(uniform())), ph = TWO_PI * uniform(); /* E|x|^2 = 1 */
        in.iq[i] = (float)(a * cos(ph)) + I * (float)(a * sin(ph));
    }
    for (int c = 0; c < C; c++)
        for (int p = 0; p < P; p++) {
            const double ph = TWO_PI * (cfg.element_spacing * c * u + f * p);
            in.iq[((size_t)c * P + p) * R + CELL] += (float)cos(ph) + I * (float)sin(ph);
        }
    if (stap_input_write(argv[1], &in, NULL, NULL, NULL, &err)) return fail("writing the cube", &err);
    free(in.iq);
    stap_input cube;
    if (stap_input_read(argv[1], &cube, NULL, &err)) return fail("reading it back", &err);

    stap_engine_options opt;
    stap_engine_options_defaults(&opt);
    opt.slots = 1;
    stap_engine *e;
    if (stap_engine_create(&e, &cfg, NULL, 0, 0, &opt, &err)) return fail("engine", &err);
    stap_cpi_result res;
    if (stap_engine_submit(e, 0, cube.iq, &err) || stap_engine_collect(e, 0, &res, &err))
        return fail("the CPI", &err);
    int found = -1;
    for (size_t k = 0; k < res.detection_count; k++) {
        const stap_detection *d = &res.detections[k];
        if (d->beam == BEAM && d->doppler_bin == BIN && d->range_cell == CELL) found = (int)k;
    }
    printf("consumer: rtstap %s (headers %s, CUDA %d): %s, %zu detections",
           stap_version(), RTSTAP_VERSION, RTSTAP_BUILT_WITH_CUDA, stap_engine_describe(e),
           res.detection_count);
    if (found >= 0)
        printf("; the target at beam %d, Doppler bin %d, range cell %d, %.1f dB\n", BEAM, BIN,
               CELL, res.detections[found].snr_db);
    else
        printf("; the target (beam %d, Doppler bin %d, range cell %d) is not among them\n",
               BEAM, BIN, CELL);
    stap_engine_destroy(e);

    /* the same cube as a ring through a stream: 6 CPIs, 2 in flight, each CPI's results to
     * a function (docs/library.md, "Streams") */
    const void *ring[1] = {cube.iq};
    const stap_stream_source src = {.kind = STAP_STREAM_RING, .cpis = 6, .ring = ring, .ring_count = 1};
    tally t = {res.detection_count, 0, 0};
    const stap_stream_sink sink = {.each = each_cpi, .each_user = &t};
    stap_stream_options so;
    stap_stream_options_defaults(&so);
    opt.slots = 2;
    stap_stream *s;
    stap_stream_report rep;
    if (stap_stream_create(&s, &cfg, NULL, 0, 0, &opt, NULL, 0, &src, &sink, &so, &err) ||
        stap_stream_run(s, &rep, &err))
        return fail("the stream", &err);
    printf("consumer: stream of %lld CPIs, %.1f CPIs/s, latency p50 %.3f ms; %lld of %lld as "
           "the engine's\n", rep.all.cpis, rep.all.cpis_per_s, rep.all.lat_p50, t.same, t.cpis);
    stap_stream_destroy(s);
    stap_input_free(&cube);
    return found >= 0 && t.cpis == 6 && t.same == 6 && rep.all.cpis == 6 ? 0 : 1;
}
