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
 * Seeds: t/fuzz/corpus/handoff (a login and a binding hand-off, made by
 * the encoder in check_handoff's way).
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
#include "worker/conn_priv.h"
#include "worker/handoff.h"

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
		if (c->sessions[0].state != SESS_FREE &&
		    c->sessions[0].uid != self)
			abort();
	}
	conn_free(c);
	return 0;
}
