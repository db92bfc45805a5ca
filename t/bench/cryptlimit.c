/*
 * cryptlimit: the crypto limits the signed and encrypted bench figures are
 * compared against: single-core throughput of the library usmbd uses
 * (gnutls), on this machine, in the same run.
 *
 *	cryptlimit [-s BYTES] [-t SECONDS]
 *
 * prints, per algorithm,
 *
 *	LIMIT crypto=aes128gcm mbps=MB/s bytes=B secs=S buf=BYTES
 *
 * aes128gcm / aes256gcm: one in-place AEAD encryption per buffer of BYTES
 * (default 1 MiB, a 1 MiB READ's payload), with a 32-byte AAD as in a
 * TRANSFORM_HEADER; gmac / cmac / hmacsha256: one MAC over the buffer, as
 * SMB2 signing does; cmac_cbc: CMAC's chain through the bulk AES-CBC
 * (what proto/sign.c signs with).  The process pins itself to the CPU it starts on, so
 * the figure is one core's, whatever the caller's affinity; CPU time is
 * CLOCK_THREAD_CPUTIME_ID, not wall time (a neighbour on the shared VM
 * stealing the core does not lower the limit).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#undef getopt	/* glibc's, not libbsd's overlay (not linked here) */

static double
cl_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
cl_report(const char *name, size_t buf, long n, double secs)
{
	double bytes = (double)buf * n;

	printf("LIMIT crypto=%s mbps=%.1f bytes=%.0f secs=%.3f buf=%zu\n", name,
	    secs > 0 ? bytes / secs / 1e6 : 0, bytes, secs, buf);
	fflush(stdout);
}

static int
cl_aead(const char *name, gnutls_cipher_algorithm_t algo, size_t klen,
    unsigned char *buf, size_t len, double budget)
{
	gnutls_aead_cipher_hd_t h;
	unsigned char key[32], nonce[12], aad[32], tag[16];
	gnutls_datum_t k = { key, (unsigned)klen };
	giovec_t a = { aad, sizeof(aad) }, d = { buf, len };
	size_t tlen;
	double t0, t;
	long n = 0;

	memset(key, 0x5a, sizeof(key));
	memset(aad, 0x11, sizeof(aad));
	memset(nonce, 0, sizeof(nonce));
	if (gnutls_aead_cipher_init(&h, algo, &k) < 0)
		return -1;
	t0 = cl_cpu();
	do {
		nonce[0] = (unsigned char)n;
		nonce[1] = (unsigned char)(n >> 8);
		tlen = sizeof(tag);
		if (gnutls_aead_cipher_encryptv2(h, nonce, sizeof(nonce), &a, 1,
		    &d, 1, tag, &tlen) < 0) {
			gnutls_aead_cipher_deinit(h);
			return -1;
		}
		n++;
		t = cl_cpu() - t0;
	} while (t < budget);
	gnutls_aead_cipher_deinit(h);
	cl_report(name, len, n, t);
	return 0;
}

/*
 * AES-GMAC as AES-GCM with the message as additional data and nothing to
 * encrypt (NIST SP 800-38D: GMAC is that): gnutls' AEAD path is its
 * accelerated GCM, the MAC API's GMAC is not.
 */
static int
cl_gmac_aead(unsigned char *buf, size_t len, double budget)
{
	gnutls_aead_cipher_hd_t h;
	unsigned char key[16], nonce[12], tag[16];
	gnutls_datum_t k = { key, sizeof(key) };
	giovec_t a = { buf, len };
	size_t tlen;
	double t0, t;
	long n = 0;

	memset(key, 0xa5, sizeof(key));
	memset(nonce, 0, sizeof(nonce));
	if (gnutls_aead_cipher_init(&h, GNUTLS_CIPHER_AES_128_GCM, &k) < 0)
		return -1;
	t0 = cl_cpu();
	do {
		nonce[0] = (unsigned char)n;
		tlen = sizeof(tag);
		if (gnutls_aead_cipher_encryptv2(h, nonce, sizeof(nonce), &a, 1,
		    NULL, 0, tag, &tlen) < 0) {
			gnutls_aead_cipher_deinit(h);
			return -1;
		}
		n++;
		t = cl_cpu() - t0;
	} while (t < budget);
	gnutls_aead_cipher_deinit(h);
	cl_report("gmac_aead", len, n, t);
	return 0;
}

/*
 * AES-CMAC's floor: gnutls' bulk AES-128-CBC over the buffer, into a
 * 2 KiB scratch chunk, as proto/sign.c computes CMAC since 2026-12-04
 * (a CBC-MAC is one serial chain: this is one core's AES latency).
 */
static int
cl_cmac_cbc(unsigned char *buf, size_t len, double budget)
{
	gnutls_cipher_hd_t h;
	unsigned char key[16], iv[16], out[2048];
	gnutls_datum_t k = { key, sizeof(key) }, v = { iv, sizeof(iv) };
	size_t off, c;
	double t0, t;
	long n = 0;

	memset(key, 0xa5, sizeof(key));
	memset(iv, 0, sizeof(iv));
	if (gnutls_cipher_init(&h, GNUTLS_CIPHER_AES_128_CBC, &k, &v) < 0)
		return -1;
	t0 = cl_cpu();
	do {
		gnutls_cipher_set_iv(h, iv, sizeof(iv));
		for (off = 0; off < len; off += c) {
			c = len - off < sizeof(out) ? len - off : sizeof(out);
			c &= ~(size_t)15;
			if (c == 0)
				break;
			if (gnutls_cipher_encrypt2(h, buf + off, c, out, c) < 0) {
				gnutls_cipher_deinit(h);
				return -1;
			}
		}
		n++;
		t = cl_cpu() - t0;
	} while (t < budget);
	gnutls_cipher_deinit(h);
	cl_report("cmac_cbc", len, n, t);
	return 0;
}

static int
cl_mac(const char *name, gnutls_mac_algorithm_t algo, unsigned char *buf,
    size_t len, double budget)
{
	gnutls_hmac_hd_t h;
	unsigned char key[16], nonce[12], out[64];
	double t0, t;
	long n = 0;

	memset(key, 0xa5, sizeof(key));
	memset(nonce, 0, sizeof(nonce));
	if (gnutls_hmac_init(&h, algo, key, sizeof(key)) < 0)
		return -1;
	t0 = cl_cpu();
	do {
		if (algo == GNUTLS_MAC_AES_GMAC_128) {
			nonce[0] = (unsigned char)n;
			gnutls_hmac_set_nonce(h, nonce, sizeof(nonce));
		}
		if (gnutls_hmac(h, buf, len) < 0) {
			gnutls_hmac_deinit(h, out);
			return -1;
		}
		gnutls_hmac_output(h, out);
		n++;
		t = cl_cpu() - t0;
	} while (t < budget);
	gnutls_hmac_deinit(h, out);
	cl_report(name, len, n, t);
	return 0;
}

int
main(int argc, char **argv)
{
	size_t len = 1 << 20;
	double budget = 0.5;
	unsigned char *buf;
	cpu_set_t set;
	int ch, cpu, bad = 0;

	while ((ch = getopt(argc, argv, "s:t:")) != -1) {
		switch (ch) {
		case 's': len = strtoul(optarg, NULL, 0); break;
		case 't': budget = atof(optarg); break;
		default:
			fprintf(stderr, "usage: cryptlimit [-s BYTES] [-t SECONDS]\n");
			return 2;
		}
	}
	if (len == 0 || budget <= 0)
		return 2;
	cpu = sched_getcpu();
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	if ((buf = malloc(len)) == NULL)
		return 1;
	memset(buf, 0x3c, len);
	bad |= cl_aead("aes128gcm", GNUTLS_CIPHER_AES_128_GCM, 16, buf, len, budget);
	bad |= cl_aead("aes256gcm", GNUTLS_CIPHER_AES_256_GCM, 32, buf, len, budget);
	bad |= cl_mac("gmac", GNUTLS_MAC_AES_GMAC_128, buf, len, budget);
	bad |= cl_gmac_aead(buf, len, budget);
	bad |= cl_mac("cmac", GNUTLS_MAC_AES_CMAC_128, buf, len, budget);
	bad |= cl_cmac_cbc(buf, len, budget);
	bad |= cl_mac("hmacsha256", GNUTLS_MAC_SHA256, buf, len, budget);
	free(buf);
	if (bad)
		fprintf(stderr, "cryptlimit: a gnutls call failed\n");
	return bad ? 1 : 0;
}
