/*
 * Writes the seeds of t/fuzz/fuzz_ctlmsg.c into DIR: one valid encoding per
 * decoder, made with the encoders the children use, behind the selector
 * byte the target reads first.  Not a fuzz target (no fuzz_ prefix).
 *
 *   cc -I. -Ibuild/lmdb -D_GNU_SOURCE -isystem /usr/include/bsd \
 *     -DLIBBSD_OVERLAY -isystem /usr/include/mit-krb5 \
 *     -o build/gen_ctlmsg_seeds t/fuzz/gen_ctlmsg_seeds.c build/libusmbd.a \
 *     build/lmdb/liblmdb.a $(pkg-config --libs gnutls libbsd-overlay \
 *     krb5-gssapi krb5) -lmd -pthread
 *   build/gen_ctlmsg_seeds t/fuzz/corpus/ctlmsg
 */
#include <err.h>
#include <stdio.h>
#include <string.h>

#include "daemon/authmsg.h"
#include "daemon/msg.h"
#include "daemon/admmsg.h"
#include "daemon/unlinkmsg.h"
#include "proto/cur.h"
#include "worker/ctlmsg.h"
#include "worker/metrics.h"

/* The selector values of fuzz_ctlmsg.c. */
enum { S_MSG_RECV, S_AUTH_REQ, S_AUTH_REP, S_UNLINK_AS, S_UNLINK_DO,
    S_METRICS, S_INFO_REP, S_IDENT, S_ADMIN };

static uint8_t buf[1 + MSG_BUF_SIZE];

static void
gen_write(const char *dir, const char *name, uint8_t sel, size_t len)
{
	char path[512];
	FILE *f;

	buf[0] = sel;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL)
		err(1, "%s", path);
	if (fwrite(buf, 1, len + 1, f) != len + 1 || fclose(f) != 0)
		err(1, "%s", path);
}

static void
gen_str(struct wcur *w, const char *s)
{
	wcur_le16(w, (uint16_t)strlen(s));
	wcur_bytes(w, s, strlen(s));
}

/* MSG_INFO_REP as worker/ctlmsg.h lays it out: one connection, one of each. */
static int
gen_info_rep(uint8_t *p, size_t cap)
{
	struct wcur w;

	wcur_init(&w, p, cap);
	wcur_le32(&w, CTLMSG_INFO_VERSION);
	wcur_le32(&w, 4242);		/* pid */
	wcur_le32(&w, 1);		/* nconn */
	gen_str(&w, "127.0.0.1");
	wcur_le16(&w, 50123);
	wcur_le32(&w, 1500);		/* idle ms */
	wcur_le16(&w, 0x0311);
	wcur_le32(&w, 1);		/* sessions */
	wcur_le64(&w, 0x100000001ull);
	wcur_le32(&w, 1000);
	gen_str(&w, "alice");
	wcur_u8(&w, 1);
	wcur_u8(&w, 0);
	wcur_u8(&w, 2);
	wcur_le32(&w, 1);		/* trees */
	wcur_le32(&w, 1);
	wcur_le64(&w, 0x100000001ull);
	gen_str(&w, "share");
	wcur_le32(&w, 1);		/* opens */
	wcur_le64(&w, 77);
	wcur_le64(&w, 0x100000001ull);
	gen_str(&w, "share");
	gen_str(&w, "dir/file.txt");
	wcur_le32(&w, 0x12019f);
	wcur_le32(&w, 7);
	wcur_u8(&w, 0xff);
	wcur_le32(&w, 7);
	wcur_u8(&w, 1);
	wcur_u8(&w, 0);			/* not truncated */
	return w.err ? -1 : (int)wcur_off(&w);
}

int
main(int argc, char **argv)
{
	static const uint8_t tok[3][24] = { "NTLMSSP\0\1", "NTLMSSP\0\2",
	    "NTLMSSP\0\3" };
	struct authmsg_req rq;
	struct authmsg_rep rp;
	struct authmsg_ident id;
	struct unlinkmsg u;
	struct admmsg_req ar;
	struct metrics m;
	int n;

	if (argc != 2)
		errx(2, "usage: gen_ctlmsg_seeds DIR");

	memset(&rq, 0, sizeof(rq));
	snprintf(rq.client, sizeof(rq.client), "192.0.2.7");
	rq.negotiate = tok[0];
	rq.negotiate_len = sizeof(tok[0]);
	rq.challenge = tok[1];
	rq.challenge_len = sizeof(tok[1]);
	rq.authenticate = tok[2];
	rq.authenticate_len = sizeof(tok[2]);
	if ((n = authmsg_req_encode(&rq, buf + 1, MSG_MAX_PAYLOAD)) < 0)
		errx(1, "authmsg_req_encode");
	gen_write(argv[1], "auth_req", S_AUTH_REQ, (size_t)n);

	memset(&rp, 0, sizeof(rp));
	rp.uid = 1000;
	rp.gid = 1000;
	snprintf(rp.user, sizeof(rp.user), "alice");
	snprintf(rp.domain, sizeof(rp.domain), "WORKGROUP");
	if ((n = authmsg_rep_encode(&rp, buf + 1, MSG_MAX_PAYLOAD)) < 0)
		errx(1, "authmsg_rep_encode");
	gen_write(argv[1], "auth_rep", S_AUTH_REP, (size_t)n);

	memset(&id, 0, sizeof(id));
	id.kind = AUTHMSG_IDENT_LOGIN;
	id.uid = 1000;
	id.gid = 1000;
	snprintf(id.user, sizeof(id.user), "alice");
	snprintf(id.peer, sizeof(id.peer), "192.0.2.9");
	if ((n = authmsg_ident_encode(&id, buf + 1, MSG_MAX_PAYLOAD)) < 0)
		errx(1, "authmsg_ident_encode");
	gen_write(argv[1], "ident", S_IDENT, (size_t)n);

	memset(&u, 0, sizeof(u));
	u.uid = 1001;
	u.dev = 0x801;
	u.ino = 123456;
	snprintf(u.share, sizeof(u.share), "share");
	snprintf(u.path, sizeof(u.path), "sticky/bob.txt");
	snprintf(u.root, sizeof(u.root), "/srv/share");
	if ((n = unlinkmsg_encode(&u, 0, buf + 1, MSG_MAX_PAYLOAD)) < 0)
		errx(1, "unlinkmsg_encode");
	gen_write(argv[1], "unlink_as", S_UNLINK_AS, (size_t)n);

	/* The same payload framed as a whole datagram, for msg_recv(). */
	memmove(buf + 1 + MSG_HDR_LEN, buf + 1, (size_t)n);
	le32_put(buf + 1, MSG_UNLINK_AS);
	le32_put(buf + 5, (uint32_t)n);
	le32_put(buf + 9, 7);
	gen_write(argv[1], "msg_frame", S_MSG_RECV, (size_t)n + MSG_HDR_LEN);

	if ((n = unlinkmsg_encode(&u, 1, buf + 1, MSG_MAX_PAYLOAD)) < 0)
		errx(1, "unlinkmsg_encode");
	gen_write(argv[1], "unlink_do", S_UNLINK_DO, (size_t)n);

	memset(&m, 0, sizeof(m));
	m.bytes_read = 1 << 20;
	m.cmd[5].count = 3;
	m.cmd[5].status[0] = 0;
	m.cmd[5].status_count[0] = 3;
	if ((n = metrics_encode(&m, buf + 1, MSG_MAX_PAYLOAD)) < 0)
		errx(1, "metrics_encode");
	gen_write(argv[1], "metrics", S_METRICS, (size_t)n);

	if ((n = gen_info_rep(buf + 1, MSG_MAX_PAYLOAD)) < 0)
		errx(1, "info_rep");
	gen_write(argv[1], "info_rep", S_INFO_REP, (size_t)n);

	memset(&ar, 0, sizeof(ar));
	ar.op = ADMMSG_FILE_CLOSE;
	ar.file_id = 0x12345678;
	if ((n = admmsg_encode(&ar, buf + 1, MSG_MAX_PAYLOAD)) < 0)
		errx(1, "admmsg_encode");
	gen_write(argv[1], "admin_close", S_ADMIN, (size_t)n);
	ar.op = ADMMSG_SESS_DEL;
	snprintf(ar.client, sizeof(ar.client), "\\\\10.0.0.7");
	snprintf(ar.user, sizeof(ar.user), "bob");
	if ((n = admmsg_encode(&ar, buf + 1, MSG_MAX_PAYLOAD)) < 0)
		errx(1, "admmsg_encode");
	gen_write(argv[1], "admin_sessdel", S_ADMIN, (size_t)n);
	return 0;
}
