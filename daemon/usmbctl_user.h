/*
 * usmbctl's commands that work without a running daemon: `user ...` on the
 * password database and `testparm` on a config file.  Both return the
 * process exit code: 0 success, 1 runtime failure or refusal, 2 usage or
 * configuration error (DESIGN.md).
 */
#ifndef USMBD_DAEMON_USMBCTL_USER_H
#define USMBD_DAEMON_USMBCTL_USER_H

struct conf;

/*
 * argv[0] is the subcommand: add NAME | del NAME | passwd NAME | list |
 * enable NAME | disable NAME | show NAME | import [FILE].  Passwords are one
 * line of standard input when it is not a terminal, else prompted twice.
 */
int	usmbctl_user_main(const struct conf *conf, int argc, char **argv);

/* Loads path, prints problems on stderr and the effective config on stdout. */
int	usmbctl_testparm(const char *path, int verbose);

#endif
