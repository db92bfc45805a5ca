/*
 * usmbctl: the admin tool.  ping, status, reload and shutdown speak the
 * control protocol of daemon/ctl.h to a running master; testparm and the
 * user subcommands work on the config and passdb directly
 * (daemon/usmbctl_user.c).  Exit codes: 0 ok, 1 runtime failure (daemon not
 * running, refused), 2 usage or configuration error.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/ctl.h"
#include "daemon/usmbctl_user.h"

#define DEFAULT_CONF	"/etc/usmbd/usmbd.conf"
#define SHUTDOWN_WAIT_MS	10000

static void __attribute__((noreturn))
usmbctl_usage(void)
{
	fprintf(stderr,
	    "usage: usmbctl [-s config] ping [PID]\n"
	    "       usmbctl [-s config] status [--processes] [--sessions] "
	    "[--shares] [--locks] [--brief] [--json]\n"
	    "       usmbctl [-s config] metrics\n"
	    "       usmbctl [-s config] debug LEVEL [PID|all]\n"
	    "       usmbctl [-s config] close-share NAME\n"
	    "       usmbctl [-s config] kill-client ADDRESS[:PORT]\n"
	    "       usmbctl [-s config] kill-session ID\n"
	    "       usmbctl [-s config] close-file FILEID\n"
	    "       usmbctl [-s config] reload [--force] | shutdown\n"
	    "       usmbctl [-s config] testparm [-v] [FILE]\n"
	    "       usmbctl [-s config] user add|del|passwd|enable|disable|show NAME\n"
	    "       usmbctl [-s config] user list | import [FILE]\n"
	    "       usmbctl [-s config] user policy [\"bad lockout attempt\" N | \"lockout duration\" MINUTES]\n");
	exit(2);
}

/*
 * Checks the arguments of a daemon command (argv[0] is the command) and
 * joins them into the request line.  0, or -1 for a usage error.
 */
static int
usmbctl_request(int argc, char **argv, char *req, size_t cap)
{
	const char *cmd = argv[0];
	size_t off = 0;
	int i, lo, hi;

	if (strcmp(cmd, "ping") == 0)
		lo = 0, hi = 1;
	else if (strcmp(cmd, "status") == 0) {
		lo = 0, hi = 6;
		for (i = 1; i < argc; i++)
			if (strcmp(argv[i], "--json") != 0 &&
			    strcmp(argv[i], "--brief") != 0 &&
			    strcmp(argv[i], "--processes") != 0 &&
			    strcmp(argv[i], "--sessions") != 0 &&
			    strcmp(argv[i], "--shares") != 0 &&
			    strcmp(argv[i], "--locks") != 0) {
				fprintf(stderr, "usmbctl: status: unknown argument: "
				    "%s\n", argv[i]);
				return -1;
			}
	} else if (strcmp(cmd, "reload") == 0) {
		lo = 0, hi = 1;
		if (argc == 2 && strcmp(argv[1], "--force") != 0) {
			fprintf(stderr, "usmbctl: reload: unknown argument: %s\n",
			    argv[1]);
			return -1;
		}
	} else if (strcmp(cmd, "shutdown") == 0 || strcmp(cmd, "metrics") == 0)
		lo = 0, hi = 0;
	else if (strcmp(cmd, "debug") == 0)
		lo = 1, hi = 2;
	else if (strcmp(cmd, "close-share") == 0)
		lo = 1, hi = 16;	/* a share name may hold blanks */
	else if (strcmp(cmd, "kill-client") == 0 ||
	    strcmp(cmd, "kill-session") == 0 ||
	    strcmp(cmd, "close-file") == 0)
		lo = 1, hi = 1;
	else {
		fprintf(stderr, "usmbctl: unknown command: %s\n", cmd);
		return -1;
	}
	if (argc - 1 < lo || argc - 1 > hi)
		return -1;
	for (i = 0; i < argc; i++) {
		int n = snprintf(req + off, cap - off, "%s%s", i ? " " : "",
		    argv[i]);

		if (n < 0 || (size_t)n >= cap - off || strchr(argv[i], '\n')) {
			fprintf(stderr, "usmbctl: %s: arguments too long\n", cmd);
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

/* The master's pid from its pidfile if that process is alive, else 0. */
static pid_t
usmbctl_running(const char *pidfile)
{
	char buf[32];
	FILE *f;
	long pid;
	char *end;

	f = fopen(pidfile, "re");
	if (f == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) == NULL) {
		fclose(f);
		return 0;
	}
	fclose(f);
	errno = 0;
	pid = strtol(buf, &end, 10);
	if (errno != 0 || end == buf || pid <= 0 || pid > INT_MAX)
		return 0;
	if (kill((pid_t)pid, 0) == -1 && errno != EPERM)
		return 0;
	return (pid_t)pid;
}

static void
usmbctl_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int
usmbctl_daemon_cmd(const struct conf *conf, const char *request)
{
	char pidfile[PATH_MAX], sock[PATH_MAX], err[512];
	pid_t pid;
	int rc, i;

	snprintf(pidfile, sizeof(pidfile), "%s/usmbd.pid", conf->pid_dir);
	pid = usmbctl_running(pidfile);
	if (pid == 0 || ctl_socket_path(conf->lock_dir, sock, sizeof(sock)) != 0)
		goto not_running;
	rc = ctl_call(sock, request, stdout, err, sizeof(err));
	if (rc < 0) {
		if (rc == -ENOENT || rc == -ECONNREFUSED)
			goto not_running;
		fprintf(stderr, "usmbctl: %s: %s\n", sock, strerror(-rc));
		return 1;
	}
	if (rc == 1) {
		fprintf(stderr, "usmbctl: %s: %s\n", request, err);
		/* The only way a reload fails is a broken config. */
		return strncmp(request, "reload", 6) == 0 ? 2 : 1;
	}
	if (strcmp(request, "shutdown") == 0) {
		/* Return once it is gone, so a restart can follow at once. */
		for (i = 0; i < SHUTDOWN_WAIT_MS / 50; i++) {
			if (kill(pid, 0) == -1 && errno == ESRCH)
				return 0;
			usmbctl_sleep_ms(50);
		}
		fprintf(stderr, "usmbctl: usmbd (pid %d) still running after "
		    "%d s\n", (int)pid, SHUTDOWN_WAIT_MS / 1000);
		return 1;
	}
	return 0;
not_running:
	fprintf(stderr, "usmbd is not running (no pidfile at %s)\n", pidfile);
	return 1;
}

int
main(int argc, char *argv[])
{
	const char *path = DEFAULT_CONF, *cmd;
	char request[CTL_LINE_MAX];
	struct conf *conf = NULL;
	int ch, rc;

	while ((ch = getopt(argc, argv, "+s:h")) != -1) {
		switch (ch) {
		case 's':
			path = optarg;
			break;
		default:
			usmbctl_usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usmbctl_usage();
	cmd = argv[0];
	if (strcmp(cmd, "testparm") == 0) {
		const char *file = path;
		int verbose = 0, i, nfile = 0;

		/* testparm [-v] [FILE]: FILE is checked instead of -s. */
		for (i = 1; i < argc; i++) {
			if (strcmp(argv[i], "-v") == 0 ||
			    strcmp(argv[i], "--verbose") == 0)
				verbose = 1;
			else if (argv[i][0] != '-' && nfile++ == 0)
				file = argv[i];
			else
				usmbctl_usage();
		}
		return usmbctl_testparm(file, verbose);
	}
	if (strcmp(cmd, "user") != 0 &&
	    usmbctl_request(argc, argv, request, sizeof(request)) != 0)
		usmbctl_usage();
	if (conf_load(path, &conf, stderr) != 0)
		return 2;
	if (strcmp(cmd, "user") == 0)
		rc = usmbctl_user_main(conf, argc - 1, argv + 1);
	else
		rc = usmbctl_daemon_cmd(conf, request);
	conf_free(conf);
	return rc;
}
