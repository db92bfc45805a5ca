/*
 * smbload: the load generator of `make bench` and of the overhead meters.
 *
 * One client, libsmbclient (Samba's own client library), used unchanged
 * against both servers, so that a ratio between them measures the servers
 * and not the clients.  Every workload is a bounded loop (a count and a
 * deadline); each timed phase prints one line
 *
 *	RESULT workload=W phase=P ops=N bytes=B secs=S truncated=0|1
 *
 * and the driver (t/bench/bench.py) turns those into rates.  With --pause
 * the client stops before and after every timed phase:
 *
 *	READY phase=P		(the driver starts strace / reads malloc counters)
 *	<a line on stdin>
 *	... the timed loop ...
 *	DONE phase=P
 *	<a line on stdin>
 *
 * so that the meters see only the steady-state requests of the phase: the
 * connection, the tree connect, opening the file and a few warm-up
 * operations happen before READY, and closing after DONE.
 *
 * usage: smbload -u smb://127.0.0.1:PORT/share -U user%pass [-V user2%pass2]
 *		-w WORKLOAD [-n N] [-s SIZE] [-r RECORD] [-z] [-c CLIENTS]
 *		[-d DIR] [-f FILE] [-t SECONDS] [-p PROTO] [-W WARM] [-P] [-k]
 *		[-C CLIENT.CONF] [-E]
 *	-k: log in with Kerberos only, the ticket from $KRB5CCNAME
 *
 * -p is the dialect (min = max: SMB2_10, SMB3_02, SMB3_11, SMB3 = up to
 * 3.1.1).  -C loads a client smb.conf (smbc_setConfiguration) before the
 * context is made: the bench's signed and encrypted modes put `client
 * signing = required`, `client smb3 signing algorithms` and `client smb3
 * encryption algorithms` there, which libsmbclient has no call for.  -E
 * requires encryption (SMB 3: the client seals every request after the
 * session setup, whether or not the share asks for it).
 *
 * workloads:
 *	upload	N files of SIZE bytes in RECORD-sized writes, in DIR; the files
 *		are deleted afterwards (not timed)
 *	write	FILE of SIZE bytes in RECORD-sized writes (-z: all zero data,
 *		else pseudo-random data that never repeats within 1 MiB)
 *	read	FILE in RECORD-sized reads, at most SIZE bytes (0: to EOF)
 *	small	N files of SIZE bytes in DIR: phases create (open+write+close),
 *		list (one directory listing), stat, read (open+read+close),
 *		delete
 *	createclose  N loops: open(O_CREAT|O_EXCL)+close, then unlink, which
 *		libsmbclient sends as CREATE(DELETE_ON_CLOSE)+CLOSE
 *	openqi	N loops of open + fstat (QUERY_INFO) + close of FILE
 *	connect	N loops of a new connection (negotiate, session setup, tree
 *		connect) + stat of the share root, then disconnect
 *	mix	CLIENTS processes (odd ones as the -V user), each N loops of
 *		createclose + openqi + a 4 KiB write at a random offset of its
 *		own file + one of the shared FILE (which must exist, 1 MiB,
 *		writable by both users)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libsmbclient.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The build's CPPFLAGS include libbsd's overlay, which renames getopt to
 * bsd_getopt; bench programs are linked without libbsd, so use glibc's. */
#undef getopt

#define POOL_SIZE	(1 << 20)	/* pseudo-random data written in slices */
#define MAX_RECORD	(16 << 20)
#define MAX_CLIENTS	64
#define MIX_FILE_SIZE	(1 << 20)

struct load_opts {
	const char	*url;		/* smb://host:port/share, no trailing slash */
	char		*user, *pass;
	char		*user2, *pass2;
	const char	*workload;
	const char	*dir;
	const char	*file;
	const char	*proto;
	const char	*conf;
	int		 encrypt;
	long		 n;
	long		 size;
	long		 rec;
	long		 warm;
	int		 zero;
	int		 clients;
	int		 seconds;
	int		 pause;
	int		 krb;		/* -k: Kerberos from the ccache */
};

struct load_count {
	long		 ops;
	long		 bytes;
	int		 truncated;
	int		 failed;
};

static struct load_opts opt;
/* The credentials this process logs in with (one user per process). */
static const char *auth_user, *auth_pass;
static unsigned char *pool;
static double deadline;

static double
load_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
load_expired(void)
{
	return load_now() > deadline;
}

static void
load_die(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	fprintf(stdout, "ERROR workload=%s ", opt.workload);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fprintf(stdout, ": %s\n", strerror(e));
	fflush(stdout);
	exit(1);
}

static void
load_auth(SMBCCTX *c, const char *srv, const char *shr, char *wg, int wglen,
    char *un, int unlen, char *pw, int pwlen)
{
	snprintf(wg, wglen, "%s", "WORKGROUP");
	snprintf(un, unlen, "%s", auth_user);
	snprintf(pw, pwlen, "%s", auth_pass);
}

static SMBCCTX *
load_ctx_new(void)
{
	SMBCCTX *ctx;

	ctx = smbc_new_context();
	if (ctx == NULL)
		load_die("smbc_new_context");
	smbc_setDebug(ctx, 0);
	smbc_setOptionDebugToStderr(ctx, 1);
	/* -k: Kerberos only, the ticket from $KRB5CCNAME (t/bench/krbconnect.sh). */
	smbc_setOptionUseKerberos(ctx, opt.krb);
	smbc_setOptionFallbackAfterKerberos(ctx, !opt.krb);
	smbc_setOptionUseCCache(ctx, opt.krb);
	/* A failed login must fail, not become an anonymous session. */
	smbc_setOptionNoAutoAnonymousLogin(ctx, 1);
	smbc_setFunctionAuthDataWithContext(ctx, load_auth);
	if (opt.conf != NULL && smbc_setConfiguration(ctx, opt.conf) != 0)
		load_die("client configuration %s", opt.conf);
	if (opt.encrypt)
		smbc_setOptionSmbEncryptionLevel(ctx, SMBC_ENCRYPTLEVEL_REQUIRE);
	if (!smbc_setOptionProtocols(ctx, opt.proto, opt.proto))
		load_die("protocol %s", opt.proto);
	if (smbc_init_context(ctx) == NULL)
		load_die("smbc_init_context");
	return ctx;
}

static void
load_ctx_free(SMBCCTX *ctx)
{
	smbc_free_context(ctx, 1);
}

/* "smb://h:p/share" + "/" + a + "/" + b */
static void
load_url(char *buf, size_t len, const char *a, const char *b)
{
	if (b != NULL)
		snprintf(buf, len, "%s/%s/%s", opt.url, a, b);
	else if (a != NULL)
		snprintf(buf, len, "%s/%s", opt.url, a);
	else
		snprintf(buf, len, "%s/", opt.url);
}

/* Between phases when --pause: tell the driver, wait for its line. */
static void
load_pause(const char *what, const char *phase)
{
	char line[64];

	if (!opt.pause)
		return;
	printf("%s phase=%s\n", what, phase);
	fflush(stdout);
	if (fgets(line, sizeof line, stdin) == NULL)
		opt.pause = 0;	/* driver gone: finish without stopping */
}

static void
load_report(const char *phase, const struct load_count *c, double secs)
{
	printf("RESULT workload=%s phase=%s ops=%ld bytes=%ld secs=%.6f "
	    "truncated=%d\n", opt.workload, phase, c->ops, c->bytes, secs,
	    c->truncated);
	fflush(stdout);
}

static void
load_mkdir(SMBCCTX *ctx, const char *dir)
{
	char url[1024];

	load_url(url, sizeof url, dir, NULL);
	if (smbc_getFunctionMkdir(ctx)(ctx, url, 0777) < 0 && errno != EEXIST)
		load_die("mkdir %s", url);
}

static void
load_write_all(SMBCCTX *ctx, SMBCFILE *f, const void *p, size_t len,
    const char *what)
{
	ssize_t w;

	w = smbc_getFunctionWrite(ctx)(ctx, f, p, len);
	if (w != (ssize_t)len)
		load_die("write %s (%zd of %zu)", what, w, len);
}

/* The data for the k-th record: a slice of the random pool, or zeros. */
static const unsigned char *
load_record(long k, size_t rec)
{
	static unsigned char *zeros;
	size_t off;

	if (opt.zero) {
		if (zeros == NULL && (zeros = calloc(1, rec)) == NULL)
			load_die("calloc");
		return zeros;
	}
	if (rec >= POOL_SIZE)
		return pool;
	/* Rotate by an odd number of 64-byte steps so that consecutive
	 * records differ; the pool is twice POOL_SIZE long for the wrap. */
	off = ((size_t)k * (rec + 64)) % POOL_SIZE;
	return pool + off;
}

static void
load_upload(SMBCCTX *ctx)
{
	struct load_count c = {0};
	char name[64], url[1024];
	long i, j, nrec;
	double t0 = 0;

	load_mkdir(ctx, opt.dir);
	nrec = (opt.size + opt.rec - 1) / opt.rec;
	for (i = 0; i < opt.n; i++) {
		SMBCFILE *f;

		if (i == opt.warm || (i == 0 && opt.warm == 0)) {
			load_pause("READY", "upload");
			t0 = load_now();
		}
		snprintf(name, sizeof name, "up%06ld", i);
		load_url(url, sizeof url, opt.dir, name);
		f = smbc_getFunctionOpen(ctx)(ctx, url,
		    O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (f == NULL)
			load_die("open %s", url);
		for (j = 0; j < nrec; j++) {
			long len = opt.size - j * opt.rec;

			if (len > opt.rec)
				len = opt.rec;
			load_write_all(ctx, f, load_record(i * nrec + j,
			    opt.rec), len, url);
			if (i >= opt.warm)
				c.bytes += len;
		}
		if (smbc_getFunctionClose(ctx)(ctx, f) < 0)
			load_die("close %s", url);
		if (i >= opt.warm)
			c.ops++;
		if (load_expired()) {
			c.truncated = i + 1 < opt.n;
			i++;
			break;
		}
	}
	load_report("upload", &c, load_now() - t0);
	load_pause("DONE", "upload");
	/* Leave the share as it was: not timed. */
	while (i-- > 0) {
		snprintf(name, sizeof name, "up%06ld", i);
		load_url(url, sizeof url, opt.dir, name);
		if (smbc_getFunctionUnlink(ctx)(ctx, url) < 0)
			load_die("unlink %s", url);
	}
}

static void
load_write(SMBCCTX *ctx)
{
	struct load_count c = {0};
	char url[1024];
	SMBCFILE *f;
	long k, nrec;
	double t0;

	load_url(url, sizeof url, opt.file, NULL);
	f = smbc_getFunctionOpen(ctx)(ctx, url, O_WRONLY | O_CREAT | O_TRUNC,
	    0644);
	if (f == NULL)
		load_die("open %s", url);
	nrec = opt.size / opt.rec;
	for (k = 0; k < opt.warm && k < nrec; k++)
		load_write_all(ctx, f, load_record(k, opt.rec), opt.rec, url);
	load_pause("READY", "write");
	t0 = load_now();
	for (; k < nrec; k++) {
		load_write_all(ctx, f, load_record(k, opt.rec), opt.rec, url);
		c.ops++;
		c.bytes += opt.rec;
		if ((k & 63) == 0 && load_expired()) {
			c.truncated = k + 1 < nrec;
			break;
		}
	}
	load_report("write", &c, load_now() - t0);
	load_pause("DONE", "write");
	if (smbc_getFunctionClose(ctx)(ctx, f) < 0)
		load_die("close %s", url);
}

static void
load_read(SMBCCTX *ctx)
{
	struct load_count c = {0};
	char url[1024];
	unsigned char *buf;
	SMBCFILE *f;
	ssize_t r = 1;
	long k;
	double t0;

	if ((buf = malloc(opt.rec)) == NULL)
		load_die("malloc");
	load_url(url, sizeof url, opt.file, NULL);
	f = smbc_getFunctionOpen(ctx)(ctx, url, O_RDONLY, 0);
	if (f == NULL)
		load_die("open %s", url);
	for (k = 0; k < opt.warm; k++)
		if ((r = smbc_getFunctionRead(ctx)(ctx, f, buf, opt.rec)) < 0)
			load_die("read %s", url);
	load_pause("READY", "read");
	t0 = load_now();
	/* Bounded by the size (or 2^40 bytes), the deadline and EOF. */
	while (r > 0 && c.bytes < (opt.size > 0 ? opt.size : (1L << 40))) {
		r = smbc_getFunctionRead(ctx)(ctx, f, buf, opt.rec);
		if (r < 0)
			load_die("read %s", url);
		if (r == 0)
			break;
		c.ops++;
		c.bytes += r;
		if ((c.ops & 63) == 0 && load_expired()) {
			c.truncated = 1;
			break;
		}
	}
	load_report("read", &c, load_now() - t0);
	load_pause("DONE", "read");
	if (smbc_getFunctionClose(ctx)(ctx, f) < 0)
		load_die("close %s", url);
	free(buf);
}

/* One phase of `small` over files sm000000.. in DIR. */
enum small_phase { SMALL_CREATE, SMALL_LIST, SMALL_STAT, SMALL_READ,
	SMALL_DELETE };

static long
load_small_phase(SMBCCTX *ctx, enum small_phase ph, long nfiles,
    struct load_count *c, unsigned char *buf)
{
	char name[64], url[1024];
	struct stat st;
	SMBCFILE *f;
	long i;

	if (ph == SMALL_LIST) {
		struct smbc_dirent *de;
		long guard = 0;

		load_url(url, sizeof url, opt.dir, NULL);
		f = smbc_getFunctionOpendir(ctx)(ctx, url);
		if (f == NULL)
			load_die("opendir %s", url);
		/* Bounded: never more entries than files + . and .. + slack. */
		while (guard++ < nfiles + 1024 &&
		    (de = smbc_getFunctionReaddir(ctx)(ctx, f)) != NULL) {
			if (strncmp(de->name, "sm", 2) == 0)
				c->ops++;
		}
		smbc_getFunctionClosedir(ctx)(ctx, f);
		if (c->ops != nfiles) {
			errno = EIO;
			load_die("listing found %ld of %ld files", c->ops,
			    nfiles);
		}
		return nfiles;
	}
	for (i = 0; i < nfiles; i++) {
		snprintf(name, sizeof name, "sm%06ld", i);
		load_url(url, sizeof url, opt.dir, name);
		switch (ph) {
		case SMALL_CREATE:
			f = smbc_getFunctionOpen(ctx)(ctx, url,
			    O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (f == NULL)
				load_die("open %s", url);
			load_write_all(ctx, f, load_record(i, opt.size),
			    opt.size, url);
			if (smbc_getFunctionClose(ctx)(ctx, f) < 0)
				load_die("close %s", url);
			c->bytes += opt.size;
			break;
		case SMALL_STAT:
			if (smbc_getFunctionStat(ctx)(ctx, url, &st) < 0)
				load_die("stat %s", url);
			if (st.st_size != opt.size) {
				errno = EIO;
				load_die("stat %s: size %jd", url,
				    (intmax_t)st.st_size);
			}
			break;
		case SMALL_READ: {
			ssize_t r;

			f = smbc_getFunctionOpen(ctx)(ctx, url, O_RDONLY, 0);
			if (f == NULL)
				load_die("open %s", url);
			r = smbc_getFunctionRead(ctx)(ctx, f, buf, opt.size);
			if (r != opt.size)
				load_die("read %s (%zd)", url, r);
			if (smbc_getFunctionClose(ctx)(ctx, f) < 0)
				load_die("close %s", url);
			c->bytes += r;
			break;
		}
		case SMALL_DELETE:
			if (smbc_getFunctionUnlink(ctx)(ctx, url) < 0)
				load_die("unlink %s", url);
			break;
		case SMALL_LIST:
			break;
		}
		c->ops++;
		/* Creation may stop early; later phases then cover the
		 * files that exist, so they are never truncated. */
		if (ph == SMALL_CREATE && (i & 15) == 0 && load_expired()) {
			c->truncated = i + 1 < nfiles;
			return i + 1;
		}
	}
	return nfiles;
}

static void
load_small(SMBCCTX *ctx)
{
	static const char *names[] = { "create", "list", "stat", "read",
	    "delete" };
	unsigned char *buf;
	long nfiles = opt.n;
	int ph;

	if ((buf = malloc(opt.size)) == NULL)
		load_die("malloc");
	load_mkdir(ctx, opt.dir);
	for (ph = SMALL_CREATE; ph <= SMALL_DELETE; ph++) {
		struct load_count c = {0};
		double t0;
		long done;

		load_pause("READY", names[ph]);
		t0 = load_now();
		done = load_small_phase(ctx, ph, nfiles, &c, buf);
		load_report(names[ph], &c, load_now() - t0);
		load_pause("DONE", names[ph]);
		if (ph == SMALL_CREATE)
			nfiles = done;
	}
	free(buf);
}

/* open(O_CREAT|O_EXCL) + close + unlink of a fresh name. */
static void
load_one_createclose(SMBCCTX *ctx, const char *dir, const char *tag, long i)
{
	char name[80], url[1024];
	SMBCFILE *f;

	snprintf(name, sizeof name, "cc%s_%ld", tag, i);
	load_url(url, sizeof url, dir, name);
	f = smbc_getFunctionOpen(ctx)(ctx, url, O_WRONLY | O_CREAT | O_EXCL,
	    0644);
	if (f == NULL)
		load_die("create %s", url);
	if (smbc_getFunctionClose(ctx)(ctx, f) < 0)
		load_die("close %s", url);
	if (smbc_getFunctionUnlink(ctx)(ctx, url) < 0)
		load_die("unlink %s", url);
}

static void
load_one_openqi(SMBCCTX *ctx, const char *url)
{
	struct stat st;
	SMBCFILE *f;

	f = smbc_getFunctionOpen(ctx)(ctx, url, O_RDONLY, 0);
	if (f == NULL)
		load_die("open %s", url);
	if (smbc_getFunctionFstat(ctx)(ctx, f, &st) < 0)
		load_die("fstat %s", url);
	if (smbc_getFunctionClose(ctx)(ctx, f) < 0)
		load_die("close %s", url);
}

/* createclose and openqi share the loop shape: warm, READY, timed, DONE. */
static void
load_loop(SMBCCTX *ctx, int qi)
{
	struct load_count c = {0};
	const char *phase = qi ? "openqi" : "createclose";
	char url[1024], tag[32];
	long i;
	double t0 = 0;

	snprintf(tag, sizeof tag, "%d", (int)getpid());
	if (qi) {
		SMBCFILE *f;

		load_url(url, sizeof url, opt.file, NULL);
		/* The file must exist with some content; create it here. */
		f = smbc_getFunctionOpen(ctx)(ctx, url, O_WRONLY | O_CREAT,
		    0644);
		if (f == NULL)
			load_die("open %s", url);
		load_write_all(ctx, f, load_record(0, 4096), 4096, url);
		smbc_getFunctionClose(ctx)(ctx, f);
	} else
		load_mkdir(ctx, opt.dir);
	for (i = 0; i < opt.n; i++) {
		if (i == opt.warm || (i == 0 && opt.warm == 0)) {
			load_pause("READY", phase);
			t0 = load_now();
		}
		if (qi)
			load_one_openqi(ctx, url);
		else
			load_one_createclose(ctx, opt.dir, tag, i);
		if (i >= opt.warm)
			c.ops++;
		if ((i & 15) == 0 && load_expired()) {
			c.truncated = i + 1 < opt.n;
			break;
		}
	}
	load_report(phase, &c, load_now() - t0);
	load_pause("DONE", phase);
}

static void
load_connect(void)
{
	struct load_count c = {0};
	char url[1024];
	struct stat st;
	long i;
	double t0 = 0;

	load_url(url, sizeof url, NULL, NULL);
	for (i = 0; i < opt.n; i++) {
		SMBCCTX *ctx;

		if (i == opt.warm || (i == 0 && opt.warm == 0)) {
			load_pause("READY", "connect");
			t0 = load_now();
		}
		ctx = load_ctx_new();
		if (smbc_getFunctionStat(ctx)(ctx, url, &st) < 0)
			load_die("stat %s", url);
		load_ctx_free(ctx);
		if (i >= opt.warm)
			c.ops++;
		if (load_expired()) {
			c.truncated = i + 1 < opt.n;
			break;
		}
	}
	load_report("connect", &c, load_now() - t0);
	load_pause("DONE", "connect");
}

static uint64_t
load_rand(uint64_t *s)
{
	/* xorshift64: cheap, and the same sequence for both servers */
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* One client of `mix`; runs in a forked child, result through fd out. */
static void
load_mix_client(int idx, int ready_fd, int go_fd, int end_fd, int out_fd)
{
	struct load_count c = {0};
	char own[1024], shared[1024], name[64];
	uint64_t seed = 0x9e3779b97f4a7c15ULL * (idx + 1);
	SMBCFILE *fown, *fsh;
	SMBCCTX *ctx;
	char byte;
	long i, k;

	if (idx % 2 == 1 && opt.user2 != NULL) {
		auth_user = opt.user2;
		auth_pass = opt.pass2;
	}
	ctx = load_ctx_new();
	snprintf(name, sizeof name, "own%02d.dat", idx);
	load_url(own, sizeof own, opt.dir, name);
	load_url(shared, sizeof shared, opt.file, NULL);
	fown = smbc_getFunctionOpen(ctx)(ctx, own, O_RDWR | O_CREAT | O_TRUNC,
	    0644);
	if (fown == NULL)
		load_die("open %s", own);
	for (k = 0; k < MIX_FILE_SIZE / 65536; k++)
		load_write_all(ctx, fown, pool, 65536, own);
	fsh = smbc_getFunctionOpen(ctx)(ctx, shared, O_RDWR, 0);
	if (fsh == NULL)
		load_die("open %s", shared);
	/* Warm-up: one of each kind. */
	snprintf(name, sizeof name, "m%02d", idx);
	load_one_createclose(ctx, opt.dir, name, -1);
	load_one_openqi(ctx, own);
	/* Close at once so that the parent sees EOF if a sibling dies. */
	if (write(ready_fd, "r", 1) != 1)
		_exit(1);
	close(ready_fd);
	if (read(go_fd, &byte, 1) < 0)
		_exit(1);
	for (i = 0; i < opt.n; i++) {
		off_t o1 = (load_rand(&seed) % (MIX_FILE_SIZE / 4096)) * 4096;
		off_t o2 = (load_rand(&seed) % (MIX_FILE_SIZE / 4096)) * 4096;

		load_one_createclose(ctx, opt.dir, name, i);
		load_one_openqi(ctx, own);
		if (smbc_getFunctionLseek(ctx)(ctx, fown, o1, SEEK_SET) < 0)
			load_die("lseek %s", own);
		load_write_all(ctx, fown, load_record(i, 4096), 4096, own);
		if (smbc_getFunctionLseek(ctx)(ctx, fsh, o2, SEEK_SET) < 0)
			load_die("lseek %s", shared);
		load_write_all(ctx, fsh, load_record(i + 1, 4096), 4096,
		    shared);
		c.ops++;
		c.bytes += 8192;
		if ((i & 7) == 0 && load_expired()) {
			c.truncated = i + 1 < opt.n;
			break;
		}
	}
	if (write(out_fd, &c, sizeof c) != sizeof c)
		_exit(1);
	close(out_fd);
	/* Keep the connection until the driver has read its meters. */
	if (read(end_fd, &byte, 1) < 0)
		_exit(1);
	smbc_getFunctionClose(ctx)(ctx, fown);
	smbc_getFunctionClose(ctx)(ctx, fsh);
	load_ctx_free(ctx);
	_exit(0);
}

static void
load_mix(void)
{
	struct load_count c = {0}, one;
	int ready[2], go[2], done[2], go2[2];
	pid_t pids[MAX_CLIENTS];
	int i, status, failed = 0;
	char byte;
	double t0;

	if (pipe(ready) < 0 || pipe(go) < 0 || pipe(done) < 0 || pipe(go2) < 0)
		load_die("pipe");
	fflush(stdout);
	for (i = 0; i < opt.clients; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			load_die("fork");
		if (pids[i] == 0) {
			close(ready[0]);
			close(go[1]);
			close(done[0]);
			close(go2[1]);
			/* go: EOF starts the loop; go2: EOF ends the client */
			load_mix_client(i, ready[1], go[0], go2[0], done[1]);
		}
	}
	close(ready[1]);
	close(done[1]);
	close(go2[0]);
	for (i = 0; i < opt.clients; i++)
		if (read(ready[0], &byte, 1) != 1) {
			failed = 1;
			break;
		}
	if (!failed) {
		load_pause("READY", "mix");
		t0 = load_now();
		close(go[1]);	/* everyone starts at once */
		for (i = 0; i < opt.clients; i++) {
			if (read(done[0], &one, sizeof one) != sizeof one) {
				failed = 1;
				break;
			}
			c.ops += one.ops;
			c.bytes += one.bytes;
			c.truncated |= one.truncated;
		}
		if (!failed) {
			load_report("mix", &c, load_now() - t0);
			load_pause("DONE", "mix");
		}
	}
	close(go[1]);
	close(go2[1]);
	for (i = 0; i < opt.clients; i++) {
		if (failed)
			kill(pids[i], SIGTERM);
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			failed = 1;
	}
	if (failed) {
		errno = EIO;
		load_die("a mix client failed");
	}
}

static void
load_usage(void)
{
	fprintf(stderr, "usage: smbload -u smb://HOST:PORT/SHARE -U USER%%PASS "
	    "[-V USER2%%PASS2] -w upload|write|read|small|createclose|openqi|"
	    "connect|mix [-n N] [-s SIZE] [-r RECORD] [-z] [-c CLIENTS] "
	    "[-d DIR] [-f FILE] [-t SECONDS] [-p PROTO] [-W WARM] [-P] [-k] "
	    "[-C CLIENT.CONF] [-E]\n");
	exit(2);
}

static void
load_split_cred(char *arg, char **user, char **pass)
{
	char *p = strchr(arg, '%');

	if (p == NULL)
		load_usage();
	*p = '\0';
	*user = arg;
	*pass = p + 1;
}

int
main(int argc, char **argv)
{
	SMBCCTX *ctx = NULL;
	uint64_t seed = 12345;
	size_t i;
	int ch;

	opt.proto = "SMB3";
	opt.n = 100;
	opt.size = 1 << 20;
	opt.rec = 1 << 16;
	opt.warm = 4;
	opt.clients = 16;
	opt.seconds = 300;
	opt.dir = "bench";
	opt.file = "bench.dat";
	while ((ch = getopt(argc, argv, "u:U:V:w:n:s:r:zc:d:f:t:p:W:PkC:E")) != -1) {
		switch (ch) {
		case 'u': opt.url = optarg; break;
		case 'U': load_split_cred(optarg, &opt.user, &opt.pass); break;
		case 'V': load_split_cred(optarg, &opt.user2, &opt.pass2); break;
		case 'w': opt.workload = optarg; break;
		case 'n': opt.n = strtol(optarg, NULL, 0); break;
		case 's': opt.size = strtol(optarg, NULL, 0); break;
		case 'r': opt.rec = strtol(optarg, NULL, 0); break;
		case 'z': opt.zero = 1; break;
		case 'c': opt.clients = atoi(optarg); break;
		case 'd': opt.dir = optarg; break;
		case 'f': opt.file = optarg; break;
		case 't': opt.seconds = atoi(optarg); break;
		case 'p': opt.proto = optarg; break;
		case 'W': opt.warm = strtol(optarg, NULL, 0); break;
		case 'P': opt.pause = 1; break;
		case 'k': opt.krb = 1; break;
		case 'C': opt.conf = optarg; break;
		case 'E': opt.encrypt = 1; break;
		default: load_usage();
		}
	}
	if (opt.url == NULL || opt.user == NULL || opt.workload == NULL ||
	    opt.n < 0 || opt.size < 0 || opt.rec <= 0 || opt.rec > MAX_RECORD ||
	    opt.warm < 0 || opt.clients < 1 || opt.clients > MAX_CLIENTS ||
	    opt.seconds < 1)
		load_usage();
	if (opt.warm > opt.n)
		opt.warm = opt.n;
	auth_user = opt.user;
	auth_pass = opt.pass;
	signal(SIGPIPE, SIG_IGN);
	/* The pool is written in slices that may start anywhere in it. */
	if ((pool = malloc(2 * POOL_SIZE + MAX_RECORD)) == NULL)
		load_die("malloc");
	for (i = 0; i < (2 * POOL_SIZE + MAX_RECORD) / 8; i++) {
		uint64_t v = load_rand(&seed);

		memcpy(pool + i * 8, &v, 8);
	}
	deadline = load_now() + opt.seconds;

	if (strcmp(opt.workload, "connect") == 0) {
		load_connect();
		return 0;
	}
	if (strcmp(opt.workload, "mix") == 0) {
		load_mix();
		return 0;
	}
	ctx = load_ctx_new();
	if (strcmp(opt.workload, "upload") == 0)
		load_upload(ctx);
	else if (strcmp(opt.workload, "write") == 0)
		load_write(ctx);
	else if (strcmp(opt.workload, "read") == 0)
		load_read(ctx);
	else if (strcmp(opt.workload, "small") == 0)
		load_small(ctx);
	else if (strcmp(opt.workload, "createclose") == 0)
		load_loop(ctx, 0);
	else if (strcmp(opt.workload, "openqi") == 0)
		load_loop(ctx, 1);
	else
		load_usage();
	load_ctx_free(ctx);
	return 0;
}
