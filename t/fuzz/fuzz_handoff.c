/*
 * libFuzzer target: a worker's MSG_CONN (worker/handoff.c handoff_accept:
 * the master's identity, then the gate's connection state, which the
 * master forwards unread).  A gate handles every client's bytes before
 * anyone is authenticated; a compromised one must not get past a user's
 * worker's decoder, so it must take any bytes: no crash, and what it
 * accepts stays inside the connection's buffers.
 *
 * The first input byte is the uid the worker runs as (a few values, so
 * the identity check is reached both ways); the rest is the payload.
 *
 * The client's port travels too; only a relayed connection (whose socket
 * is a socketpair) reports it, a worker holding the client's socket asks
 * the socket.
 *
 * Seeds: t/fuzz/corpus/handoff (a login and a binding hand-off, made by
 * the encoder in check_handoff's way, and a relayed Kerberos session
 * whose owner's client is on port 50123).
 * Run:
 *   make build/fuzz/fuzz_handoff
 *   build/fuzz/fuzz_handoff -max_total_time=60 t/fuzz/corpus/handoff
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/authmsg.h"
#include "proto/cur.h"
#include "worker/conn_priv.h"
#include "worker/handoff.h"
#include "worker/relay.h"

static void
seed(const char *dir, const char *name, int with_session)
{
	static uint8_t buf[AUTHMSG_IDENT_LEN + 4096 + HANDOFF_MAX_EXTRA];
	struct authmsg_ident id;
	struct session *s = NULL;
	struct conn *g;
	char path[512];
	FILE *f;
	int n;

	memset(&id, 0, sizeof(id));
	id.kind = with_session ? 1 : 0;
	id.uid = id.gid = 1001;
	snprintf(id.user, sizeof(id.user), "alice");
	snprintf(id.peer, sizeof(id.peer), "192.0.2.9");	/* the master's */
	buf[0] = 1;	/* runs as uid 1001 */
	if (authmsg_ident_encode(&id, buf + 1, sizeof(buf) - 1) !=
	    AUTHMSG_IDENT_LEN)
		return;
	g = conn_new(NULL, -1, CONN_ROLE_GATE, "192.0.2.9", CONN_BUF_SMALL);
	if (g == NULL)
		return;
	g->dialect = 0x0311;
	if (with_session && (s = conn_session_new(g)) != NULL) {
		s->state = SESS_VALID;
		snprintf(s->user, sizeof(s->user), "alice");
		s->uid = s->gid = 1001;
	}
	n = handoff_encode(g, s, (const uint8_t *)"\0\0\0\4\xfeSMB", 8,
	    buf + 1 + AUTHMSG_IDENT_LEN, sizeof(buf) - 1 - AUTHMSG_IDENT_LEN);
	conn_free(g);
	if (n <= 0)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) != NULL) {
		fwrite(buf, 1, 1 + AUTHMSG_IDENT_LEN + (size_t)n, f);
		fclose(f);
	}
}

/*
 * A relayed session (worker/relay.h relay_accept): the identity, the
 * master's whole verdict (a Kerberos one: AP-REP, lifetime), the relay
 * state, the owner's connection state.
 */
static void
seed_relay(const char *dir, const char *name)
{
	static uint8_t buf[AUTHMSG_IDENT_LEN + 4096 + HANDOFF_MAX_EXTRA];
	static const uint8_t mech[] = { 0x30, 0x0b, 0x06, 0x09, 0x2a, 0x86,
	    0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02 };
	struct authmsg_ident id;
	struct authmsg_rep v;
	struct relay_state st;
	struct conn *g;
	char path[512];
	size_t off;
	FILE *f;
	int n;

	memset(&id, 0, sizeof(id));
	id.kind = AUTHMSG_IDENT_RELAY;
	id.uid = id.gid = 1002;
	snprintf(id.user, sizeof(id.user), "bob");
	snprintf(id.peer, sizeof(id.peer), "192.0.2.44");	/* the master's */
	buf[0] = 2;	/* runs as uid 1002 */
	if (authmsg_ident_encode(&id, buf + 1, sizeof(buf) - 1) !=
	    AUTHMSG_IDENT_LEN)
		return;
	off = 1 + AUTHMSG_IDENT_LEN;
	memset(&v, 0, sizeof(v));
	v.uid = v.gid = 1002;
	snprintf(v.user, sizeof(v.user), "bob");
	memset(v.session_key, 0x5a, sizeof(v.session_key));
	v.lifetime = 36000;
	v.mech_out_len = 16;
	memset(v.mech_out, 0x6f, 16);
	n = authmsg_rep_encode(&v, buf + off + 4, AUTHMSG_REP_MAX);
	if (n < 0)
		return;
	le32_put(buf + off, (uint32_t)n);
	off += 4 + (size_t)n;
	memset(&st, 0, sizeof(st));
	st.session_id = 0x1122334455667788ull;
	st.spnego = 1;
	st.mech_types = mech;
	st.mech_types_len = sizeof(mech);
	st.krb_mech = 3;
	st.krb_mic = 1;
	st.krb_ctx = 77;
	n = relay_state_encode(&st, buf + off, sizeof(buf) - off);
	if (n < 0)
		return;
	off += (size_t)n;
	g = conn_new(NULL, -1, CONN_ROLE_WORKER, "192.0.2.9", CONN_BUF_SMALL);
	if (g == NULL)
		return;
	g->dialect = 0x0210;
	g->signing_required = 1;
	n = handoff_encode(g, NULL, (const uint8_t *)"\0\0\0\4\xfeSMB", 8,
	    buf + off, sizeof(buf) - off);
	conn_free(g);
	if (n <= 0)
		return;
	/* The client's port (no socket here): after the version and peer. */
	le16_put(buf + off + 4 + 2 + strlen("192.0.2.9"), 50123);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) != NULL) {
		fwrite(buf, 1, off + (size_t)n, f);
		fclose(f);
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("FUZZ_HANDOFF_SEEDS");

	(void)argc;
	(void)argv;
	/* FUZZ_HANDOFF_SEEDS=DIR: write the seeds there (t/fuzz/corpus/handoff). */
	if (dir != NULL) {
		seed(dir, "login", 1);
		seed(dir, "binding", 0);
		seed_relay(dir, "relay_krb");
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uid_t uids[4] = { 0, 1001, 1002, 65534 };
	struct conn *c;
	uid_t self;

	if (size < 1)
		return 0;
	self = uids[data[0] & 3];
	c = conn_new(NULL, -1, CONN_ROLE_WORKER, "t", CONN_BUF_SMALL);
	if (c == NULL)
		return 0;
	if (handoff_accept(c, data + 1, size - 1, self) == 0) {
		struct conn_private *pv = c->priv;

		if (pv->rlen > pv->rcap)
			abort();
		if (memchr(c->peer, '\0', sizeof(c->peer)) == NULL)
			abort();
		/*
		 * A relayed session is in progress, its identity the
		 * master's verdict until its setup runs: of this uid.
		 */
		if (pv->relayed) {
			if (pv->relay_verdict == NULL ||
			    pv->relay_verdict->uid != self ||
			    c->sessions[0].state != SESS_IN_PROGRESS ||
			    conn_peer_port(c) != pv->peer_port)
				abort();
		} else if ((c->sessions[0].state != SESS_FREE &&
		    c->sessions[0].uid != self) || conn_peer_port(c) != 0)
			abort();	/* no socket here: no port to report */
	}
	conn_free(c);
	return 0;
}
