/*
 * namepatcost: CPU per name of daemon/conf_namepat.c's matcher, what a
 * listing pays per entry for `veto files` (and again for `hide files`).
 *
 *	namepatcost [-n NAMES] [-r ROUNDS]
 *
 * matches NAMES directory-like names ("file00042.dat", none vetoed, so
 * every entry of the list is tried) against the 5-entry list of
 * t/bench/vetocost.sh, case-insensitively, ROUNDS times, and prints the
 * thread CPU time per name:
 *
 *	NAMEPATCOST list=5 names=10000 ns_per_name=21.4 ms_per_10000=0.21
 *
 * and the same for a list of one plain name and for a name that the list
 * does match (the first wildcard entry).  No allocation while matching.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/conf.h"

static double
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void
run(const char *label, const char *list, char (*names)[32], int n, int rounds)
{
	struct conf_namepat *np = NULL;
	char hint[160];
	double t0, t1;
	volatile int hits = 0;
	int r, i;

	if (conf_namepat_compile(list, &np, hint, sizeof(hint)) != 0) {
		fprintf(stderr, "namepatcost: %s\n", hint);
		exit(1);
	}
	t0 = cpu_ns();
	for (r = 0; r < rounds; r++)
		for (i = 0; i < n; i++)
			hits += conf_namepat_match(np, names[i],
			    strlen(names[i]), 0);
	t1 = cpu_ns();
	printf("NAMEPATCOST %s names=%d hits=%d ns_per_name=%.1f "
	    "ms_per_10000=%.3f\n", label, n, hits / rounds,
	    (t1 - t0) / ((double)n * rounds),
	    (t1 - t0) / ((double)n * rounds) * 1e4 / 1e6);
	conf_namepat_free(np);
}

int
main(int argc, char **argv)
{
	int n = 10000, rounds = 100, c, i;
	char (*names)[32];

	while ((c = getopt(argc, argv, "n:r:")) != -1) {
		if (c == 'n')
			n = atoi(optarg);
		else if (c == 'r')
			rounds = atoi(optarg);
		else {
			fprintf(stderr, "usage: namepatcost [-n NAMES] "
			    "[-r ROUNDS]\n");
			return 2;
		}
	}
	if (n < 1 || rounds < 1 || (names = calloc((size_t)n,
	    sizeof(*names))) == NULL)
		return 2;
	for (i = 0; i < n; i++)
		snprintf(names[i], sizeof(names[i]), "file%05d.dat", i);
	run("list=5", "/.DS_Store/._*/Thumbs.db/*.tmp/~$*/", names, n, rounds);
	run("list=1-plain", "/Thumbs.db/", names, n, rounds);
	run("list=1-middle-star", "/f*0*.dat/", names, n, rounds);
	for (i = 0; i < n; i++)
		snprintf(names[i], sizeof(names[i]), "._file%05d.dat", i);
	run("list=5-all-vetoed", "/.DS_Store/._*/Thumbs.db/*.tmp/~$*/", names,
	    n, rounds);
	free(names);
	return 0;
}
