/* cli_files: the files a command reads and writes, so that no output ever replaces an input.
 * Options marked CLI_INPUT or CLI_OUTPUT in a command's table are registered as they are
 * parsed (cli_parse); a command registers the files it learns of later itself (the data
 * file a SigMF metadata file names, the PERFECT files of --input-dir, plot's pictures). An
 * output that is an input — the same file, whatever the path: the same device and inode
 * through `..`, symbolic or hard links — or that another output also names is a usage error
 * (exit 2) naming both options, before any work; -f never overrides it.
 *
 * Under RTSTAP_TEST_INVARIANTS=DIR (the test suite) the program also checks, as it ends,
 * what every failing run must leave behind (cli_files_invariants). */
#ifndef CLI_FILES_H
#define CLI_FILES_H

/* Register a file the command reads (flag: "--input", or a description such as "the data
 * file of --meta"). EXIT_OK, or EXIT_USAGE (printed) when an output already registered is
 * that file. path NULL: nothing. */
int cli_files_input(const char *flag, const char *path);
/* Register a file the command writes (NULL and "-", stdout, are not files). EXIT_OK, or
 * EXIT_USAGE (printed) when it is an input or another output registered. */
int cli_files_output(const char *flag, const char *path);

/* Under RTSTAP_TEST_INVARIANTS=DIR, at the end of main: a run ends with status 0, 1, 2 or 128 +
 * SIGHUP/SIGINT/SIGTERM; no HDF5 object is left open; no temporary file of an output is
 * left; every input has the bytes it had when it was registered. A violation is printed
 * ("rtstap: internal error: invariant: ..."), recorded in DIR (one file per process, for
 * the suite's check) and turns the status into 70. Without the variable: status. */
int cli_files_invariants(int status, int argc, char **argv);

#endif
