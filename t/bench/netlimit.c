/*
 * netlimit: the physical limits the bench compares against, measured
 * between two processes on this machine over TCP on 127.0.0.1.
 *
 *	netlimit [-n PINGS] [-b BYTES] [-t SECONDS]
 *
 * prints
 *
 *	LIMIT loopback_rtt_us=MEDIAN rtt_p10_us=.. rtt_p90_us=.. pings=N
 *	LIMIT echo_cpu_us=US pings=N
 *	LIMIT loopback_mbps=MB/s bytes=B secs=S
 *
 * The RTT is a 1-byte ping-pong with TCP_NODELAY (what a small synchronous
 * SMB request pays at least); echo_cpu_us is the CPU time the echoing
 * process spent per ping (CLOCK_PROCESS_CPUTIME_ID: the scheduler's own
 * count), the least CPU any server spends per synchronous request on this
 * machine: a read and a write, no work (on this 2-vCPU VM mostly the cost
 * of waking the peer's idle vCPU when they run apart); the throughput is
 * one stream of 1 MiB writes
 * that the receiver acknowledges once it has read everything.  Both are
 * bounded by their count and by the deadline.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#undef getopt	/* glibc's, not libbsd's overlay (not linked here) */

#define CHUNK	(1 << 20)

static double
net_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
net_die(const char *what)
{
	perror(what);
	exit(1);
}

static int
net_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
net_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The peer: echo every byte of the first connection (its CPU per echo
 * goes back on cpufd), sink the second.
 */
static void
net_serve(int lfd, long long bytes, int cpufd)
{
	static char buf[CHUNK];
	long long got = 0, echoes = 0;
	double cpu[2];
	ssize_t r;
	int fd;

	if ((fd = accept(lfd, NULL, NULL)) < 0)
		_exit(1);
	cpu[0] = net_cpu();
	while ((r = read(fd, buf, 1)) == 1) {
		if (write(fd, buf, 1) != 1)
			_exit(1);
		echoes++;
	}
	cpu[0] = echoes > 0 ? (net_cpu() - cpu[0]) / echoes : 0;
	cpu[1] = (double)echoes;
	if (write(cpufd, cpu, sizeof cpu) != (ssize_t)sizeof cpu)
		_exit(1);
	close(fd);
	if ((fd = accept(lfd, NULL, NULL)) < 0)
		_exit(1);
	while (got < bytes && (r = read(fd, buf, sizeof buf)) > 0)
		got += r;
	if (write(fd, "k", 1) != 1)
		_exit(1);
	close(fd);
	_exit(0);
}

static int
net_connect(const struct sockaddr_in *sin)
{
	int fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		net_die("socket");
	if (connect(fd, (const struct sockaddr *)sin, sizeof *sin) < 0)
		net_die("connect");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

int
main(int argc, char **argv)
{
	static char buf[CHUNK];
	struct sockaddr_in sin;
	socklen_t sl = sizeof sin;
	long long bytes = 1LL << 30, sent = 0;
	double *rtt, t0, deadline, secs, echo[2];
	int lfd, fd, ch, status, pings = 20000, done = 0, cpup[2];
	double seconds = 20;
	pid_t pid;
	char c = 'p';

	while ((ch = getopt(argc, argv, "n:b:t:")) != -1) {
		switch (ch) {
		case 'n': pings = atoi(optarg); break;
		case 'b': bytes = atoll(optarg); break;
		case 't': seconds = atof(optarg); break;
		default:
			fprintf(stderr, "usage: netlimit [-n PINGS] [-b BYTES] "
			    "[-t SECONDS]\n");
			return 2;
		}
	}
	if (pings < 10 || bytes < CHUNK || seconds <= 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	if ((rtt = calloc(pings, sizeof *rtt)) == NULL)
		net_die("calloc");
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof sin) < 0 ||
	    listen(lfd, 4) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &sl) < 0)
		net_die("listen");
	if (pipe(cpup) < 0)
		net_die("pipe");
	if ((pid = fork()) < 0)
		net_die("fork");
	if (pid == 0)
		net_serve(lfd, bytes, cpup[1]);
	close(lfd);
	close(cpup[1]);

	deadline = net_now() + seconds / 2;
	fd = net_connect(&sin);
	for (done = 0; done < pings && net_now() < deadline; done++) {
		t0 = net_now();
		if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
			net_die("ping");
		rtt[done] = net_now() - t0;
	}
	close(fd);
	qsort(rtt, done, sizeof *rtt, net_cmp);
	printf("LIMIT loopback_rtt_us=%.1f rtt_p10_us=%.1f rtt_p90_us=%.1f "
	    "pings=%d\n", rtt[done / 2] * 1e6, rtt[done / 10] * 1e6,
	    rtt[done * 9 / 10] * 1e6, done);
	if (read(cpup[0], echo, sizeof echo) != (ssize_t)sizeof echo)
		net_die("echo cpu");
	printf("LIMIT echo_cpu_us=%.1f pings=%.0f\n", echo[0] * 1e6, echo[1]);
	close(cpup[0]);

	memset(buf, 0x5a, sizeof buf);
	fd = net_connect(&sin);
	deadline = net_now() + seconds / 2;
	t0 = net_now();
	while (sent < bytes && net_now() < deadline) {
		ssize_t w = write(fd, buf, sizeof buf);

		if (w <= 0)
			net_die("stream");
		sent += w;
	}
	/* Tell the sink how much really came (the deadline may cut it). */
	shutdown(fd, SHUT_WR);
	if (read(fd, &c, 1) != 1)
		net_die("ack");
	secs = net_now() - t0;
	close(fd);
	printf("LIMIT loopback_mbps=%.1f bytes=%lld secs=%.3f\n",
	    sent / secs / 1e6, sent, secs);
	waitpid(pid, &status, 0);
	free(rtt);
	return 0;
}
