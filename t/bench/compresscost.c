/*
 * compresscost: CPU per MiB of SMB 3.1.1 compression (proto/compress.c)
 * as a READ answer takes it: a 1 MiB message (80 bytes of headers, then
 * the data) compressed whole (smb2_compress, chained: NONE + Pattern_V1 +
 * LZ77), and decompressed (smb2_decompress), beside a memcpy of the same
 * MiB (what a plain READ's copy into the send buffer costs; sendfile
 * costs less still).
 *
 *	compresscost [-n ROUNDS]
 *
 * prints for each kind of data (text: office-like lines; zeros: one run;
 * random: nothing to find; mixed: text with runs and noise)
 *
 *	COMPRESSCOST data=text op=compress ms_per_mib=2.10 ratio=0.071
 *
 * op = compress, decompress, memcpy; ratio = compressed / plain (0: sent
 * plain, nothing saved).  CPU time of the thread (CLOCK_THREAD_CPUTIME_ID),
 * read once per batch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/compress.h"

#define MIB	(1u << 20)

static uint8_t msg[MIB], z[MIB + 4096], back[MIB + 4096];
static struct lz77_table tab;

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
fill(const char *kind)
{
	uint32_t x = 42;
	size_t i;

	memset(msg, 0, 80);
	memcpy(msg, "\xfeSMB", 4);
	for (i = 80; i < MIB; i++) {
		x = x * 1103515245 + 12345;
		if (strcmp(kind, "text") == 0)
			msg[i] = (x >> 16) % 64 == 0 ? (uint8_t)('a' + (x >> 8) % 26) :
			    (uint8_t)"Quarterly report, line 0042: revenue "
			    "as planned; costs as planned.\r\n"[i % 69];
		else if (strcmp(kind, "zeros") == 0)
			msg[i] = 0;
		else if (strcmp(kind, "random") == 0)
			msg[i] = (uint8_t)(x >> 16);
		else	/* mixed: text, a run of zeros per 64 KiB, some noise */
			msg[i] = (i % 65536) < 8192 ? 0 : (x >> 16) % 16 == 0 ?
			    (uint8_t)(x >> 8) : (uint8_t)"office data "[i % 12];
	}
}

int
main(int argc, char **argv)
{
	static const char *kinds[] = { "text", "zeros", "random", "mixed" };
	int rounds = 20, i, k, c;
	size_t n = 0;
	double t0, t;

	while ((c = getopt(argc, argv, "n:")) != -1)
		if (c == 'n')
			rounds = atoi(optarg);
	for (k = 0; k < 4; k++) {
		fill(kinds[k]);
		t0 = now_ms();
		for (i = 0; i < rounds; i++)
			n = smb2_compress(msg, MIB, 80, COMPRESS_ALGS_SUPPORTED, 1,
			    z, sizeof(z), &tab);
		t = (now_ms() - t0) / rounds;
		printf("COMPRESSCOST data=%s op=compress ms_per_mib=%.2f "
		    "ratio=%.4f\n", kinds[k], t, (double)n / MIB);
		if (n > 0) {
			t0 = now_ms();
			for (i = 0; i < rounds; i++)
				if (smb2_decompress(z, n, COMPRESS_ALGS_SUPPORTED,
				    1, back, sizeof(back)) != (ssize_t)MIB)
					return 1;
			t = (now_ms() - t0) / rounds;
			printf("COMPRESSCOST data=%s op=decompress "
			    "ms_per_mib=%.2f\n", kinds[k], t);
		}
		t0 = now_ms();
		for (i = 0; i < rounds * 10; i++) {
			memcpy(back, msg, MIB);
			__asm__ volatile("" : : "r"(back) : "memory");
		}
		t = (now_ms() - t0) / (rounds * 10);
		printf("COMPRESSCOST data=%s op=memcpy ms_per_mib=%.3f\n",
		    kinds[k], t);
	}
	return 0;
}
