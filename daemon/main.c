/*
 * usmbd: the master process and the entry of the hidden child modes.
 *
 * The master reads the config, takes the pidfile, listens, and runs one
 * epoll loop.  Signals arrive on a signalfd and are handled as events in
 * that loop, never in a handler.  Children are fork+exec'd copies of this
 * binary started with `--child gate|worker` (HACKING.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <libutil.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/admreq.h"
#include "daemon/auth.h"
#include "daemon/conf.h"
#include "daemon/ctl.h"
#include "daemon/listen.h"
#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/msg.h"
#include "daemon/reap.h"
#include "daemon/route.h"
#include "daemon/spawn.h"
#include "daemon/statectl.h"
#include "daemon/userlist.h"
#include "worker/worker.h"

#define DEFAULT_CONF	"/etc/usmbd/usmbd.conf"
#define FILETIME_UNIX_EPOCH	116444736000000000ULL	/* 1601 -> 1970 in 100 ns */

static struct pidfh	*main_pfh;
static int		 main_argv0_len;
static int		 main_sigfd = -1;

static void __attribute__((noreturn))
main_usage(void)
{
	fprintf(stderr, "usage: usmbd [-F] [-d level] [-s config]\n"
	    "       usmbd --version\n");
	exit(2);
}

static int
main_mkdir(const char *path, mode_t mode)
{
	struct stat st;

	if (mkdir(path, mode) == 0)
		return 0;
	if (errno != EEXIST) {
		fprintf(stderr, "usmbd: mkdir %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (stat(path, &st) == -1 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "usmbd: %s: not a directory\n", path);
		return -1;
	}
	/* The private dir holds the password hashes: never world-readable. */
	if (mode == 0700 && (st.st_mode & 077) != 0 && chmod(path, 0700) == -1) {
		fprintf(stderr, "usmbd: chmod %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Reads the server GUID, or creates it once (16 random bytes, mode 0600). */
static int
main_load_guid(const char *private_dir, uint8_t guid[16])
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/server_guid", private_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, guid, 16);
		close(fd);
		if (n == 16)
			return 0;
		fprintf(stderr, "usmbd: %s: short file, making a new GUID\n", path);
	}
	if (getrandom(guid, 16, 0) != 16) {
		fprintf(stderr, "usmbd: getrandom: %s\n", strerror(errno));
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, guid, 16) != 16 || fsync(fd) == -1) {
		fprintf(stderr, "usmbd: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * fork + setsid with stdio on /dev/null.  The parent waits for the child to
 * say it wrote the pidfile, so an init script sees it as soon as we return.
 */
static void
main_daemonize(void)
{
	int pfd[2], devnull;
	pid_t pid;
	char c;

	if (pipe2(pfd, O_CLOEXEC) == -1)
		fatal("pipe");
	pid = fork();
	if (pid == -1)
		fatal("fork");
	if (pid > 0) {
		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(pfd[0]);
	if (setsid() == -1)
		fatal("setsid");
	if (chdir("/") == -1)
		fatal("chdir /");
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0)
		fatal("/dev/null");
	dup2(devnull, STDIN_FILENO);
	dup2(devnull, STDOUT_FILENO);
	dup2(devnull, STDERR_FILENO);
	if (devnull > STDERR_FILENO)
		close(devnull);
	if (log_open(master.conf->log_file) != 0)
		(void)log_open(NULL);
	if (pidfile_write(main_pfh) == -1)
		fatal("pidfile %s", master.pidfile);
	(void)write(pfd[1], "", 1);
	close(pfd[1]);
}

static void
main_signals(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		fatal("sigprocmask");
	main_sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (main_sigfd == -1)
		fatal("signalfd");
	if (master_ev_add(main_sigfd, MASTER_EV_SIGNAL, 0, EPOLLIN) != 0)
		fatal("epoll_ctl signalfd");
}

static int	main_got_chld;

static void
main_signal_event(void)
{
	struct signalfd_siginfo si;
	char err[256];
	int i;

	for (i = 0; i < 64; i++) {
		if (read(main_sigfd, &si, sizeof(si)) != sizeof(si))
			return;
		switch (si.ssi_signo) {
		case SIGHUP:
			log_info("SIGHUP: reloading %s", master.conf_path);
			(void)master_reload(err, sizeof(err));
			break;
		case SIGTERM:
		case SIGINT:
			master_shutdown_begin(si.ssi_signo == SIGTERM ?
			    "SIGTERM" : "SIGINT");
			break;
		case SIGCHLD:
			main_got_chld = 1;
			break;
		}
	}
}

static int
main_loop_timeout(void)
{
	int t = -1, x;

	x = spawn_timeout_ms();
	if (x >= 0 && (t < 0 || x < t))
		t = x;
	x = auth_timeout_ms();
	if (x >= 0 && (t < 0 || x < t))
		t = x;
	x = statectl_timeout_ms();
	if (x >= 0 && (t < 0 || x < t))
		t = x;
	x = admreq_timeout_ms();
	if (x >= 0 && (t < 0 || x < t))
		t = x;
	/* Control clients and the shutdown deadline are checked each second. */
	if (t < 0 || t > 1000)
		t = 1000;
	return t;
}

static void
main_loop(void)
{
	struct epoll_event evs[64];
	int n, i;

	for (;;) {
		n = epoll_wait(master.epfd, evs, 64, main_loop_timeout());
		if (n == -1 && errno != EINTR)
			fatal("epoll_wait");
		for (i = 0; i < n; i++) {
			uint32_t kind = (uint32_t)(evs[i].data.u64 >> 32);
			uint32_t idx = (uint32_t)evs[i].data.u64;

			switch (kind) {
			case MASTER_EV_SIGNAL:
				main_signal_event();
				break;
			case MASTER_EV_LISTEN:
				listen_event(idx);
				break;
			case MASTER_EV_CTL:
				ctl_accept();
				break;
			case MASTER_EV_CTL_CLIENT:
				ctl_client_event(idx);
				break;
			case MASTER_EV_CHILD:
				if (idx < SPAWN_MAX_CHILDREN)
					spawn_child_event(&spawn_children[idx]);
				break;
			}
		}
		/* Reap first so slots are free before anything respawns. */
		if (main_got_chld) {
			main_got_chld = 0;
			reap_children();
		}
		auth_tick();
		ctl_tick();
		route_tick();
		admreq_tick();
		if (!master.shutting_down)
			statectl_tick();
		if (master.shutting_down) {
			if (spawn_count_alive() == 0)
				return;
			if (time(NULL) >= master.shutdown_deadline) {
				log_warnx("children still running after %d s: SIGKILL",
				    MASTER_SHUTDOWN_GRACE);
				return;
			}
		} else {
			spawn_tick();
			userlist_tick();
		}
		listen_update_polling();
	}
}

/* Kills what is left, reaps it, and removes our files. */
static void
main_finish(void)
{
	int i, left;

	for (i = 0; i < SPAWN_MAX_CHILDREN; i++)
		if (spawn_children[i].pid > 0)
			kill(spawn_children[i].pid, SIGKILL);
	/* Bounded: each waitpid returns once a SIGKILLed child is gone. */
	for (left = spawn_count_alive(); left > 0; left--) {
		int st;
		pid_t pid = waitpid(-1, &st, 0);
		struct child *c;

		if (pid <= 0)
			break;
		/* The next start makes the state afresh: no purge. */
		if ((c = spawn_find(pid)) != NULL)
			spawn_child_gone(c);
	}
	ctl_close();
	listen_close();
	auth_passdb_close();
	if (main_pfh != NULL)
		pidfile_remove(main_pfh);
	log_info("stopped");
}

static int
main_master(void)
{
	struct conf *conf = master.conf;
	pid_t other = 0;

	if (geteuid() != 0) {
		fprintf(stderr, "usmbd: the master must run as root\n");
		return 1;
	}
	if (main_mkdir(conf->pid_dir, 0755) != 0 ||
	    main_mkdir(conf->lock_dir, 0755) != 0 ||
	    main_mkdir(conf->private_dir, 0700) != 0)
		return 1;
	snprintf(master.pidfile, sizeof(master.pidfile), "%s/usmbd.pid",
	    conf->pid_dir);
	main_pfh = pidfile_open(master.pidfile, 0644, &other);
	if (main_pfh == NULL) {
		if (errno == EEXIST) {
			fprintf(stderr, "usmbd: already running as pid %d "
			    "(pidfile %s)\n", (int)other, master.pidfile);
			return 1;
		}
		fprintf(stderr, "usmbd: pidfile %s: %s\n", master.pidfile,
		    strerror(errno));
		return 1;
	}
	if (main_load_guid(conf->private_dir, master.guid) != 0)
		goto fail;
	master.started = time(NULL);
	master.started_filetime = (uint64_t)master.started * 10000000ULL +
	    FILETIME_UNIX_EPOCH;
	master.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (master.epfd == -1) {
		fprintf(stderr, "usmbd: epoll_create1: %s\n", strerror(errno));
		goto fail;
	}
	if (listen_open(conf) != 0)
		goto fail;
	if (ctl_open(conf->lock_dir) != 0)
		goto fail;
	if (auth_passdb_open(conf) != 0)
		log_warnx("passdb in %s unavailable, logons will fail",
		    conf->private_dir);
	if (!master.foreground)
		main_daemonize();
	else if (pidfile_write(main_pfh) == -1)
		fatal("pidfile %s", master.pidfile);
	log_set_tag("master");
	/*
	 * Volatile state starts afresh: what is there belongs to dead
	 * processes.  The master makes the files and never opens them; the
	 * state process (worker/statep.c) makes the databases in them.
	 */
	(void)statectl_start();
	/*
	 * Padded to the length of the original argv[0]: libbsd marks a
	 * shorter title's end with a '.' that ps would show.
	 */
	setproctitle("-%-*s", main_argv0_len, "usmbd: master");
	main_signals();
	log_info("usmbd %s started, config %s, pid %d", USMBD_VERSION,
	    master.conf_path, (int)getpid());
	spawn_tick();
	main_loop();
	main_finish();
	return 0;
fail:
	listen_close();
	ctl_close();
	pidfile_remove(main_pfh);
	return 1;
}

/* --child gate|worker|state: load the config, drop privileges, run the role. */
static int
main_child(const char *role, const char *user, long uid, long gid)
{
	struct conf *conf = NULL;
	char title[128];
	int ipc_only;

	if (conf_load(master.conf_path, &conf, stderr) != 0)
		return 2;
	master_apply_log_level(conf);
	if (strcmp(role, "gate") == 0) {
		log_set_tag("gate");
		if (user_drop_gate() != 0)
			fatalx("gate: privilege drop failed");
		setproctitle("-usmbd: gate");
		return gate_main(conf, master.conf_path, MSG_CHILD_FD);
	}
	if (strcmp(role, "state") == 0) {
		log_set_tag("state");
		if (user_drop_state() != 0)
			fatalx("state: privilege drop failed");
		setproctitle("-usmbd: state");
		return statep_main(conf, master.conf_path, MSG_CHILD_FD);
	}
	if (strcmp(role, "krb") == 0) {
		log_set_tag("krb");
		setproctitle("-usmbd: krb");
		return krb_main(conf, MSG_CHILD_FD);
	}
	if (strcmp(role, "sdw") == 0) {
		log_set_tag("sdw");
		setproctitle("-usmbd: sdw");
		return sdw_main(conf, MSG_CHILD_FD);
	}
	if (strcmp(role, "worker") == 0) {
		if (user == NULL || uid < 0 || gid < 0)
			fatalx("worker: --user, --uid and --gid are required");
		snprintf(title, sizeof(title), "worker %s", user);
		log_set_tag(title);
		ipc_only = user_worker_ipc_only(conf, (uid_t)uid);
		if (user_drop_worker(user, (uid_t)uid, (gid_t)gid,
		    ipc_only) != 0)
			fatalx("worker %s: privilege drop failed", user);
		setproctitle("-usmbd: worker %s", user);
		return worker_main(conf, master.conf_path, MSG_CHILD_FD, user,
		    (uid_t)uid, (gid_t)gid, ipc_only);
	}
	fprintf(stderr, "usmbd: unknown child role %s\n", role);
	return 2;
}

static long
main_number(const char *s, const char *what, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > max) {
		fprintf(stderr, "usmbd: bad %s: %s\n", what, s);
		exit(2);
	}
	return v;
}

int
main(int argc, char *argv[], char *envp[])
{
	static const struct option longopts[] = {
		{ "version",	no_argument,		NULL, 'V' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "child",	required_argument,	NULL, 'C' },
		{ "user",	required_argument,	NULL, 'U' },
		{ "uid",	required_argument,	NULL, 'u' },
		{ "gid",	required_argument,	NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf_path = DEFAULT_CONF, *child = NULL, *user = NULL;
	char abspath[PATH_MAX];
	long uid = -1, gid = -1;
	int ch, rc;

	main_argv0_len = argc > 0 ? (int)strlen(argv[0]) : 0;
	setproctitle_init(argc, argv, envp);
	while ((ch = getopt_long(argc, argv, "Fd:s:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'F':
			master.foreground = 1;
			break;
		case 'd':
			master.debug_level = (int)main_number(optarg, "debug level", 10);
			break;
		case 's':
			conf_path = optarg;
			break;
		case 'V':
			printf("usmbd %s\n", USMBD_VERSION);
			return 0;
		case 'C':
			child = optarg;
			break;
		case 'U':
			user = optarg;
			break;
		case 'u':
			uid = main_number(optarg, "uid", 0x7fffffff);
			break;
		case 'g':
			gid = main_number(optarg, "gid", 0x7fffffff);
			break;
		default:
			main_usage();
		}
	}
	if (optind != argc)
		main_usage();
	/* Children and reloads must find the file after chdir("/"). */
	if (realpath(conf_path, abspath) == NULL) {
		fprintf(stderr, "usmbd: %s: %s\n", conf_path, strerror(errno));
		return 2;
	}
	master.conf_path = abspath;
	if (master.debug_level >= 0)
		log_level = master.debug_level;
	if (child != NULL) {
		/* Lines go to the master on the channel: no log file, no syslog. */
		log_init("child", 1);
		log_to_channel(MSG_CHILD_FD);
		return main_child(child, user, uid, gid);
	}
	log_init("master", 1);
	if (conf_load(master.conf_path, &master.conf, stderr) != 0)
		return 2;
	master_apply_log_level(master.conf);
	rc = main_master();
	conf_free(master.conf);
	return rc;
}
