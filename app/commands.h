/* commands: rtstap's subcommands, one table (commands.c) for the dispatcher (main.c) and
 * the documentation generator (cli_doc.c). */
#ifndef COMMANDS_H
#define COMMANDS_H

typedef struct cli_command_entry {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} cli_command_entry;

extern const cli_command_entry cli_commands[];
extern const int cli_command_count;

/* `rtstap --help-all FORMAT`: every command's help from its option table, as markdown
 * (docs/cli.md), a man page (rtstap.1) or a bash completion script; on stdout. Returns an
 * exit status (2 for an unknown format). */
int cli_doc(const char *format);

#endif
