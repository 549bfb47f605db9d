/* cmd_scene: the scene subcommands of rtstap (issue 5) — `gen` (airborne scene
 * generator), `sinr` (SINR loss of a run's weights against the scene's truth) and
 * `plot` (PNG pictures). Each takes argv[0] = its name and returns the exit status
 * (0 ok, 1 input or processing error, 2 usage). */
#ifndef CMD_SCENE_H
#define CMD_SCENE_H

int cmd_gen(int argc, char **argv);
int cmd_sinr(int argc, char **argv);
int cmd_plot(int argc, char **argv);

#endif
