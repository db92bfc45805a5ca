/*
 * signcost: CPU per message of proto/sign.c's signing, through the same
 * reusable context a session holds (smb2_sign_ctx_iov), for each
 * algorithm, beside gnutls' own MAC API (what proto/sign.c used before
 * computing AES-CMAC through AES-CBC) and a bare SHA-256 (HMAC-SHA256's
 * floor: the hash itself).
 *
 *	signcost [-n MESSAGES]
 *
 * prints, for a 128-byte message (a small request), a 4,176-byte one (a
 * 4 KiB READ response: header, body, data) and 1 MiB,
 *
 *	SIGNCOST algo=cmac len=4176 us=3.43 mbps=1217
 *
 * algo = hmac, cmac, gmac (proto/sign.c), cmac_macapi (gnutls_hmac with
 * GNUTLS_MAC_AES_CMAC_128), sha256 (gnutls_hash_fast); and the sealing of
 * the same message as a session does it (proto/crypt.c smb2_encrypt_ctx,
 * in place, the nonce included): gcm128, gcm256, ccm128.  The clock is read
 * once per batch (CLOCK_THREAD_CPUTIME_ID), so it adds nothing per message.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "proto/crypt.h"
#include "proto/sign.h"

#undef getopt	/* glibc's, not libbsd's overlay */

enum { SC_HMAC, SC_CMAC, SC_GMAC, SC_CMAC_MACAPI, SC_SHA256, SC_GCM128,
    SC_GCM256, SC_CCM128, SC_N };

static const char *const sc_names[SC_N] = { "hmac", "cmac", "gmac",
    "cmac_macapi", "sha256", "gcm128", "gcm256", "ccm128" };

static double
sc_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
sc_run(int which, uint8_t *buf, size_t len, long n)
{
	static const int algo[] = { SIGN_HMAC_SHA256, SIGN_AES_CMAC,
	    SIGN_AES_GMAC };
	static const uint16_t cipher[] = { [SC_GCM128] = SMB2_ENCRYPTION_AES128_GCM,
	    [SC_GCM256] = SMB2_ENCRYPTION_AES256_GCM,
	    [SC_CCM128] = SMB2_ENCRYPTION_AES128_CCM };
	struct smb2_sign_ctx cx = { 0 };
	struct smb2_crypt_ctx ex = { 0 };
	uint8_t th[SMB2_TRANSFORM_HDR_LEN], ekey[32];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	gnutls_hmac_hd_t h = NULL;
	uint8_t key[16], out[32];
	double t0, t;
	long i;
	int bad = 0;

	memset(key, 0xa5, sizeof(key));
	memset(ekey, 0x5a, sizeof(ekey));
	if (which == SC_CMAC_MACAPI &&
	    gnutls_hmac_init(&h, GNUTLS_MAC_AES_CMAC_128, key, 16) < 0)
		return -1;
	t0 = sc_cpu();
	for (i = 0; i < n; i++) {
		switch (which) {
		case SC_CMAC_MACAPI:
			/* as proto/sign.c fed it: around the signature */
			bad |= gnutls_hmac(h, buf, 48) < 0;
			bad |= gnutls_hmac(h, buf + 48, 16) < 0;
			bad |= gnutls_hmac(h, buf + 64, len - 64) < 0;
			gnutls_hmac_output(h, out);
			break;
		case SC_SHA256:
			bad |= gnutls_hash_fast(GNUTLS_DIG_SHA256, buf, len,
			    out) < 0;
			break;
		case SC_GCM128:
		case SC_GCM256:
		case SC_CCM128:
			/* in place: buf has SMB2_CRYPT_SLACK bytes beyond len */
			bad |= smb2_encrypt_ctx(&ex, cipher[which], ekey, 7,
			    &iov, 1, th, buf) != (int)len;
			break;
		default:
			bad |= smb2_sign_ctx_iov(&cx, algo[which], key, &iov, 1,
			    out) < 0;
		}
	}
	t = sc_cpu() - t0;
	if (h != NULL)
		gnutls_hmac_deinit(h, out);
	smb2_sign_ctx_free(&cx);
	smb2_crypt_ctx_free(&ex);
	if (bad)
		return -1;
	printf("SIGNCOST algo=%s len=%zu us=%.3f mbps=%.0f\n", sc_names[which],
	    len, t / n * 1e6, t > 0 ? (double)len * n / t / 1e6 : 0);
	return 0;
}

int
main(int argc, char **argv)
{
	static const size_t lens[] = { 128, 4176, 1 << 20 };
	long n = 100000;
	uint8_t *buf;
	cpu_set_t set;
	size_t i, j;
	int ch, cpu, bad = 0;

	while ((ch = getopt(argc, argv, "n:")) != -1) {
		if (ch != 'n') {
			fprintf(stderr, "usage: signcost [-n MESSAGES]\n");
			return 2;
		}
		n = strtol(optarg, NULL, 10);
	}
	if (n <= 0)
		return 2;
	cpu = sched_getcpu();
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	buf = malloc(lens[2] + SMB2_CRYPT_SLACK);
	if (buf == NULL)
		return 1;
	for (j = 0; j < lens[2]; j++)
		buf[j] = (uint8_t)(j * 7);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		/* about the same bytes per size: fewer 1 MiB messages */
		long k = lens[i] > 65536 ? n / 200 + 1 : n;

		for (j = 0; j < SC_N; j++)
			bad |= sc_run((int)j, buf, lens[i], k);
	}
	free(buf);
	return bad ? 1 : 0;
}
