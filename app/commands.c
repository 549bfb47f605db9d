/* commands.c: the table of rtstap's subcommands (commands.h). */
#include "commands.h"

#include "cli.h"
#include "cmd_scene.h"

const cli_command_entry cli_commands[] = {
    {"run", cmd_run, "process a data cube (HDF5) or a synthesized one: weights, output, timing"},
    {"info", cmd_info, "how rtstap will read a file: type, scale, axes, CPIs, what a run would use"},
    {"stream", cmd_stream, "stream CPIs through the engine with several in flight: CPIs/s, latency"},
    {"bench", cmd_bench_pipeline, "per-stage times and CPIs/s of every backend on every workload"},
    {"bench-qr", cmd_bench_qr, "time the batched complex QR of every backend, with accuracy"},
    {"perfect", cmd_perfect, "run the PERFECT suite's STAP application on its raw files"},
    {"import-perfect", cmd_import_perfect, "convert PERFECT STAP inputs to a schema-v1.1 HDF5 file"},
    {"import-raw", cmd_import_raw, "convert a raw file of interleaved complex samples to schema v1.1"},
    {"import-sigmf", cmd_import_sigmf, "convert a SigMF recording (.sigmf-meta/.sigmf-data) to schema v1.1"},
    {"send", cmd_send, "send a recording as a live VITA-49 stream over UDP, paced, with optional loss"},
    {"listen", cmd_listen, "receive a live VITA-49 stream over UDP into CPIs: complete, lost, counted"},
    {"gen", cmd_gen, "draw an airborne scene (clutter, jammers, noise, targets) with its truth"},
    {"sinr", cmd_sinr, "SINR loss of a run's weights against a generated scene's optimum"},
    {"roc", cmd_roc, "Pd against SINR and measured pfa of the AMF, Kelly and ACE detectors vs theory"},
    {"plot", cmd_plot, "PNG pictures: angle-Doppler spectrum, SINR loss, range-Doppler map"},
};
const int cli_command_count = (int)(sizeof cli_commands / sizeof *cli_commands);
