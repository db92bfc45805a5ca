/*
 * malloc_count: count heap calls per process, for the overhead meters.
 *
 * Built twice from this one file:
 *
 *  - as an LD_PRELOAD object (cc -shared -fPIC -DMALLOC_COUNT_PRELOAD, done
 *    by t/bench/benchlib.py into build/t/bench/malloc_count.so).  Every
 *    process that loads it keeps its counters in a small shared file
 *    $MALLOC_COUNT_DIR/<pid>, mapped MAP_SHARED, so that a driver can read
 *    them at any moment without a signal (servers block signals for
 *    signalfd, and a dump at exit would come too late for a window).  A
 *    process that forks gets a file of its own (pthread_atfork); exec keeps
 *    the pid and so keeps counting into the same file.  Allocation goes to
 *    glibc's own __libc_malloc and friends: nothing else changes.
 *
 *  - as a program (the GNUmakefile's t/bench rule): malloc_count DIR prints
 *    one line per counter file, "pid=P malloc=.. calloc=.. realloc=..
 *    free=.. memalign=.. alive=0|1".
 *
 * The record layout (struct mc_counts) is read by benchlib.py too: keep the
 * two in step.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MC_MAGIC	0x544e434f4c4c414dULL	/* "MALLOCNT" little endian */

struct mc_counts {
	uint64_t	magic;
	uint64_t	pid;
	uint64_t	malloc_calls;
	uint64_t	calloc_calls;
	uint64_t	realloc_calls;
	uint64_t	free_calls;		/* free(NULL) not counted */
	uint64_t	memalign_calls;		/* posix_memalign, aligned_alloc, ... */
};

#ifdef MALLOC_COUNT_PRELOAD
#include <pthread.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void  __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

/* Calls made before the constructor ran (ld.so, early libc) land here. */
static struct mc_counts mc_early;
static struct mc_counts *mc = &mc_early;

#define MC_INC(field)	__atomic_fetch_add(&mc->field, 1, __ATOMIC_RELAXED)

/* Formats DIR/PID without stdio (which may allocate). */
static int
mc_path(char *buf, size_t len, const char *dir, long pid)
{
	char num[24];
	size_t dl = strlen(dir), nl = 0;
	int i;

	do {
		num[nl++] = '0' + pid % 10;
		pid /= 10;
	} while (pid > 0 && nl < sizeof num);
	if (dl + 1 + nl + 1 > len)
		return -1;
	memcpy(buf, dir, dl);
	buf[dl] = '/';
	for (i = 0; i < (int)nl; i++)
		buf[dl + 1 + i] = num[nl - 1 - i];
	buf[dl + 1 + nl] = '\0';
	return 0;
}

/*
 * Maps this pid's counter file.  `carry` are the counts to start from: the
 * early counts after exec, zero after fork (the parent keeps its own).
 */
static void
mc_attach(const struct mc_counts *carry, int fresh)
{
	const char *dir = getenv("MALLOC_COUNT_DIR");
	struct mc_counts *m;
	char path[4096];
	struct stat st;
	int fd;

	if (dir == NULL || mc_path(path, sizeof path, dir, getpid()) < 0)
		return;
	/* Not O_TRUNC: after exec the same pid goes on counting. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || (st.st_size < (off_t)sizeof *m &&
	    ftruncate(fd, sizeof *m) < 0)) {
		close(fd);
		return;
	}
	m = mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	if (fresh || m->magic != MC_MAGIC || m->pid != (uint64_t)getpid()) {
		memset(m, 0, sizeof *m);
		m->pid = getpid();
	}
	m->malloc_calls += carry->malloc_calls;
	m->calloc_calls += carry->calloc_calls;
	m->realloc_calls += carry->realloc_calls;
	m->free_calls += carry->free_calls;
	m->memalign_calls += carry->memalign_calls;
	__atomic_store_n(&m->magic, MC_MAGIC, __ATOMIC_RELEASE);
	mc = m;
}

static void
mc_after_fork(void)
{
	static const struct mc_counts zero;

	/* The parent's mapping is shared: leave it, start a fresh one (a
	 * file left by an earlier process with this pid is reset). */
	mc = &mc_early;
	memset(&mc_early, 0, sizeof mc_early);
	mc_attach(&zero, 1);
}

__attribute__((constructor)) static void
mc_init(void)
{
	struct mc_counts early = mc_early;

	mc_attach(&early, 0);
	pthread_atfork(NULL, NULL, mc_after_fork);
}

void *
malloc(size_t n)
{
	MC_INC(malloc_calls);
	return __libc_malloc(n);
}

void *
calloc(size_t a, size_t b)
{
	MC_INC(calloc_calls);
	return __libc_calloc(a, b);
}

void *
realloc(void *p, size_t n)
{
	MC_INC(realloc_calls);
	return __libc_realloc(p, n);
}

void *
reallocarray(void *p, size_t a, size_t b)
{
	size_t n;

	if (__builtin_mul_overflow(a, b, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	MC_INC(realloc_calls);
	return __libc_realloc(p, n);
}

void
free(void *p)
{
	if (p != NULL)
		MC_INC(free_calls);
	__libc_free(p);
}

void *
memalign(size_t al, size_t n)
{
	MC_INC(memalign_calls);
	return __libc_memalign(al, n);
}

void *
aligned_alloc(size_t al, size_t n)
{
	MC_INC(memalign_calls);
	return __libc_memalign(al, n);
}

int
posix_memalign(void **out, size_t al, size_t n)
{
	void *p;

	if (al < sizeof(void *) || (al & (al - 1)) != 0)
		return EINVAL;
	MC_INC(memalign_calls);
	p = __libc_memalign(al, n);
	if (p == NULL && n != 0)
		return ENOMEM;
	*out = p;
	return 0;
}

void *
valloc(size_t n)
{
	MC_INC(memalign_calls);
	return __libc_valloc(n);
}

void *
pvalloc(size_t n)
{
	MC_INC(memalign_calls);
	return __libc_pvalloc(n);
}

#else /* the reader program */

int
main(int argc, char **argv)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: malloc_count DIR\n");
		return 2;
	}
	if ((d = opendir(argv[1])) == NULL) {
		fprintf(stderr, "malloc_count: %s: %s\n", argv[1],
		    strerror(errno));
		return 1;
	}
	/* Bounded by the directory's size. */
	while ((de = readdir(d)) != NULL) {
		struct mc_counts c;
		char path[4096];
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", argv[1], de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fread(&c, sizeof c, 1, f) == 1 && c.magic == MC_MAGIC) {
			printf("pid=%" PRIu64 " malloc=%" PRIu64 " calloc=%"
			    PRIu64 " realloc=%" PRIu64 " free=%" PRIu64
			    " memalign=%" PRIu64 " alive=%d\n", c.pid,
			    c.malloc_calls, c.calloc_calls, c.realloc_calls,
			    c.free_calls, c.memalign_calls,
			    kill((pid_t)c.pid, 0) == 0);
			n++;
		}
		fclose(f);
	}
	closedir(d);
	return n > 0 ? 0 : 1;
}
#endif
