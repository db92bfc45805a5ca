/*
 * sealfloor: what a sealed 1 MiB READ cannot avoid, one step at a time,
 * in server CPU per MiB (issue 17: where the time beyond AES-GCM goes).
 *
 *	sealfloor FILE [-n ROUNDS]
 *
 * FILE should be on the file system the bench shares (tmpfs) and at
 * least a few MiB; it is read in 1 MiB pieces, cycling over the file.
 * Prints, in microseconds of this thread's CPU per MiB:
 *
 *	SEALFLOOR step=pread us=...		the kernel's copy into a buffer
 *	SEALFLOOR step=gcm_inplace us=...	AES-128-GCM in place over it
 *	SEALFLOOR step=pread_gcm us=...		both: what usmbd does per READ
 *	SEALFLOOR step=mmap_populate us=...	mapping the page cache instead
 *						of copying it (mmap+munmap)
 *	SEALFLOOR step=mmap_gcm us=...		AES-GCM read from that mapping
 *						into a buffer, mapping included
 *
 * so the two ways to get the file's bytes under the cipher can be
 * compared on this machine.  The process pins itself to the CPU it
 * starts on; CLOCK_THREAD_CPUTIME_ID, as cryptlimit.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#undef getopt	/* glibc's, not libbsd's overlay (not linked here) */

#define SF_MIB	(1u << 20)
#define SF_TAG	16

enum sf_step { SF_PREAD, SF_GCM, SF_PREAD_GCM, SF_MMAP, SF_MMAP_GCM };

static const char *const sf_names[] = { "pread", "gcm_inplace", "pread_gcm",
    "mmap_populate", "mmap_gcm" };

static double
sf_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
sf_gcm(gnutls_aead_cipher_hd_t h, const unsigned char *src, unsigned char *dst)
{
	unsigned char nonce[12] = { 0 }, aad[32] = { 0 };
	size_t clen = SF_MIB + SF_TAG;

	return gnutls_aead_cipher_encrypt(h, nonce, sizeof(nonce), aad,
	    sizeof(aad), SF_TAG, src, SF_MIB, dst, &clen);
}

/* One piece of the step; 0 or -1. */
static int
sf_one(enum sf_step step, int fd, off_t off, gnutls_aead_cipher_hd_t h,
    unsigned char *buf)
{
	void *m;
	int rc = 0;

	switch (step) {
	case SF_PREAD:
		return pread(fd, buf, SF_MIB, off) == SF_MIB ? 0 : -1;
	case SF_GCM:
		return sf_gcm(h, buf, buf) < 0 ? -1 : 0;
	case SF_PREAD_GCM:
		if (pread(fd, buf, SF_MIB, off) != SF_MIB)
			return -1;
		return sf_gcm(h, buf, buf) < 0 ? -1 : 0;
	case SF_MMAP:
	case SF_MMAP_GCM:
		m = mmap(NULL, SF_MIB, PROT_READ, MAP_SHARED | MAP_POPULATE, fd,
		    off);
		if (m == MAP_FAILED)
			return -1;
		if (step == SF_MMAP_GCM && sf_gcm(h, m, buf) < 0)
			rc = -1;
		munmap(m, SF_MIB);
		return rc;
	}
	return -1;
}

int
main(int argc, char **argv)
{
	unsigned char key[16];
	gnutls_datum_t k = { key, sizeof(key) };
	gnutls_aead_cipher_hd_t h;
	unsigned char *buf;
	struct stat st;
	cpu_set_t set;
	long rounds = 200, i, pieces;
	int ch, fd, cpu, s;
	double t0;

	while ((ch = getopt(argc, argv, "n:")) != -1) {
		if (ch != 'n') {
			fprintf(stderr, "usage: sealfloor FILE [-n ROUNDS]\n");
			return 2;
		}
		rounds = strtol(optarg, NULL, 10);
	}
	if (optind + 1 != argc || rounds <= 0) {
		fprintf(stderr, "usage: sealfloor FILE [-n ROUNDS]\n");
		return 2;
	}
	fd = open(argv[optind], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < (off_t)SF_MIB) {
		perror(argv[optind]);
		return 1;
	}
	pieces = st.st_size / SF_MIB;
	cpu = sched_getcpu();
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	memset(key, 0x5a, sizeof(key));
	buf = malloc(SF_MIB + SF_TAG);
	if (buf == NULL || gnutls_aead_cipher_init(&h,
	    GNUTLS_CIPHER_AES_128_GCM, &k) < 0)
		return 1;
	memset(buf, 0x3c, SF_MIB + SF_TAG);
	for (s = SF_PREAD; s <= SF_MMAP_GCM; s++) {
		t0 = sf_cpu();
		for (i = 0; i < rounds; i++)
			if (sf_one(s, fd, (off_t)(i % pieces) * SF_MIB, h,
			    buf) < 0) {
				fprintf(stderr, "sealfloor: %s failed\n",
				    sf_names[s]);
				return 1;
			}
		printf("SEALFLOOR step=%s us=%.1f rounds=%ld\n", sf_names[s],
		    (sf_cpu() - t0) / rounds * 1e6, rounds);
	}
	gnutls_aead_cipher_deinit(h);
	free(buf);
	close(fd);
	return 0;
}
