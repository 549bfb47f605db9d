/* cli_look: the beams in physical units on the command line — --look AZ[,EL] (repeated, or a
 * list AZ[,EL];AZ[,EL]...), --sector AZ1:AZ2[,EL] over --beams B, the target's Doppler
 * --doppler-hz F or --doppler-mps V from the input's /radar PRF and carrier — turned into the
 * steering vectors of the run (stap_steering_from_looks; docs/processing.md "Steering and
 * array geometry"). */
#ifndef CLI_LOOK_H
#define CLI_LOOK_H

#include "cli_opts.h"
#include "h5io.h"

enum { CLI_MAX_LOOKS = 1024 };

typedef struct cli_look {
    stap_look looks[CLI_MAX_LOOKS]; /* --look, in order                                 */
    int n;
    int sector_given;
    double sector[3];               /* az1, az2, el                                     */
    double doppler_hz, doppler_mps;
    int hz_given, mps_given;
} cli_look;

int cli_parse_look(const cli_opt *o, const char *arg);   /* value: cli_look * */
int cli_parse_sector(const cli_opt *o, const char *arg); /* value: cli_look * */

#define CLI_OPTS_LOOK(l)                                                                       \
    {"look", 0, CLI_CALL, (l), "AZ[,EL]",                                                      \
     "a beam at azimuth AZ, elevation EL (degrees; EL default 0):\n"                           \
     "repeat it, or list beams as AZ[,EL];AZ[,EL]... (the beams\n"                             \
     "replace the default ones; docs/processing.md)",                                          \
     .parse = cli_parse_look},                                                                 \
    {"sector", 0, CLI_CALL, (l), "AZ1:AZ2[,EL]",                                               \
     "beams from azimuth AZ1 to AZ2, both ends included, as\n"                               \
     "many as --beams (degrees; one beam: the centre), at\n"                                 \
     "elevation EL",                                                                           \
     .parse = cli_parse_sector},                                                               \
    {"doppler-hz", 0, CLI_DOUBLE, &(l)->doppler_hz, "F",                                       \
     "steer --look/--sector to a target at Doppler F Hz (needs\n"                               \
     "the input's /radar prf_hz; aliased into the PRF's band)",                                \
     .lo = -1e15, .hi = 1e15, .given = &(l)->hz_given},                                        \
    {"doppler-mps", 0, CLI_DOUBLE, &(l)->doppler_mps, "V",                                     \
     "the same for a target closing at V m/s (Doppler 2 V / lambda;\n"                         \
     "needs /radar prf_hz and carrier_frequency_hz)",                                          \
     .lo = -1e9, .hi = 1e9, .given = &(l)->mps_given}

/* 1 when the command line asked for looks (--look or --sector). */
int cli_look_given(const cli_look *l);
/* Checks that need no input: --look with --sector or --beams, --doppler-* without a look or
 * both. A usage error (EXIT_USAGE, printed) or EXIT_OK. */
int cli_look_check(const cli_look *l, int beams_given);
/* The looks into the steering of cfg (resolved: shape, Q, D, window, spacing) through the
 * input's /array geometry and calibration (when it has them): in->steering, steering_beams,
 * steering_len and in->looks (owned by in, freed by stap_input_free), for the input named
 * `name`. Without --look or --sector an input with /array (and no /steering) gets the default
 * beams' directions, azimuth asin(u_b), through its geometry; else nothing is done. EXIT_USAGE
 * when the input has its own /steering or lacks the metadata a Doppler needs, or the
 * algorithm takes no Doppler; EXIT_PROCESSING for another refusal (printed); EXIT_OK. */
int cli_look_apply(const cli_look *l, stap_input *in, const stap_config *cfg, const char *name);

#endif
