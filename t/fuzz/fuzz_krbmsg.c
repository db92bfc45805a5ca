/*
 * libFuzzer target: what the ticket helper's answers and the Kerberos
 * logon path decode.  The helper reads clients' tickets, so the master
 * takes its MSG_KRB_REP as a compromised child's; and the gate and the
 * worker recognise a client's Kerberos token in SPNEGO before anything
 * else reads it.
 *
 * The first input byte picks the decoder, the rest is its input:
 *
 *	0  krbmsg_rep_decode()       MSG_KRB_REP (master)
 *	1  spnego_decode() + spnego_krb5_token()   a client's security
 *	   buffer, then its mechToken, as worker/gate.c reads them
 *	2  authmsg_req_decode() / authmsg_rep_decode()   with the mech
 *	   and AP-REP fields Kerberos added
 *	3  usermap_lookup()          a `username map` file and a name
 *	4  krbmsg_req_decode()       MSG_KRB_REQ (the helper): an AP-REQ
 *	   with the mechTypes and MIC of Kerberos after another mechanism,
 *	   or a kept context's MIC
 *	5  pac_logon_groups()        a PAC's logon info (the helper, from a
 *	   ticket a KDC signed; decoded with the same care)
 *
 * Invariants beyond "no crash": an accepted MSG_KRB_REP encodes back to
 * exactly its input and its strings end inside their fields; an accepted
 * successful one names a principal and has a key; a krb5 token is only
 * ever found inside the buffer; an accepted MSG_KRB_REQ is an AP-REQ or
 * a kept context's MIC, never both, and encodes back to its input; the
 * mechanism positions SPNEGO reports are inside the list.
 *
 * Seeds: t/fuzz/corpus/krbmsg.
 * Run:
 *   make build/fuzz/fuzz_krbmsg
 *   build/fuzz/fuzz_krbmsg -max_total_time=60 t/fuzz/corpus/krbmsg
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/authmsg.h"
#include "daemon/krbmsg.h"
#include "daemon/msg.h"
#include "daemon/usermap.h"
#include "proto/pac.h"
#include "proto/spnego.h"

static uint8_t	out[sizeof(struct krbmsg_rep) + 128];

static void
fuzz_rep(const uint8_t *p, size_t n)
{
	static struct krbmsg_rep r;
	int m;

	if (krbmsg_rep_decode(&r, p, n) != 0)
		return;
	if (memchr(r.principal, '\0', sizeof(r.principal)) == NULL ||
	    memchr(r.why, '\0', sizeof(r.why)) == NULL ||
	    r.key_len > sizeof(r.key) || r.out_len > sizeof(r.out))
		abort();
	if (r.status == 0 && (r.principal[0] == '\0' || r.key_len == 0))
		abort();
	if (r.pac_n_rids > PAC_MAX_RIDS || r.pac_n_rids > r.pac_n_groups ||
	    memchr(r.pac_domain, '\0', sizeof(r.pac_domain)) == NULL)
		abort();
	m = krbmsg_rep_encode(&r, out, sizeof(out));
	if (m < 0 || (size_t)m != n || memcmp(out, p, n) != 0)
		abort();
}

static void
fuzz_spnego(const uint8_t *p, size_t n)
{
	struct spnego_token sp;
	uint16_t id;

	if (spnego_decode(p, n, &sp) != 0)
		return;
	if (sp.krb5_pos > sp.n_mech_types || sp.ntlmssp_pos > sp.n_mech_types ||
	    (sp.krb5_pos != 0) != (sp.krb5_mech != 0) ||
	    (sp.krb5_preferred != 0 && sp.krb5_pos != 1) ||
	    (sp.krb5_pos != 0 && sp.krb5_pos == sp.ntlmssp_pos))
		abort();
	if (sp.mech_token == NULL)
		return;
	if (sp.mech_token < p || sp.mech_token + sp.mech_token_len > p + n)
		abort();
	(void)spnego_krb5_token(sp.mech_token, sp.mech_token_len, &id);
}

static void
fuzz_authmsg(const uint8_t *p, size_t n)
{
	static struct authmsg_rep rep;
	struct authmsg_req req;

	if (authmsg_req_decode(&req, p, n) == 0 &&
	    req.mech > AUTHMSG_MECH_KRB5_MIC)
		abort();
	if (authmsg_rep_decode(&rep, p, n) == 0 &&
	    (rep.mech_out_len > sizeof(rep.mech_out) ||
	    rep.full_key_len > sizeof(rep.full_key) ||
	    rep.mic_len > sizeof(rep.mic)))
		abort();
}

static void
fuzz_req(const uint8_t *p, size_t n)
{
	static uint8_t back[MSG_MAX_PAYLOAD];
	struct krbmsg_req q;
	int m;

	if (krbmsg_req_decode(&q, p, n) != 0)
		return;
	if ((q.ctx == 0) != (q.token_len != 0) ||
	    q.mech_types_len > AUTH_MECH_TYPES_MAX ||
	    (q.ctx != 0 && (q.mic_len == 0 || q.mech_types_len != 0)))
		abort();
	if ((q.token_len && (q.token < p || q.token + q.token_len > p + n)) ||
	    (q.mic_len && (q.mic < p || q.mic + q.mic_len > p + n)))
		abort();
	m = krbmsg_req_encode(&q, back, sizeof(back));
	if (m < 0 || (size_t)m != n || memcmp(back, p, n) != 0)
		abort();
}

static void
fuzz_usermap(const uint8_t *p, size_t n)
{
	const uint8_t *nl = memchr(p, '\n', n);
	char name[128], user[64];
	size_t k;
	FILE *f;

	if (nl == NULL || (size_t)(nl - p) >= sizeof(name))
		return;
	k = (size_t)(nl - p);
	memcpy(name, p, k);
	name[k] = '\0';
	f = fmemopen((void *)(nl + 1), n - k - 1, "r");
	if (f == NULL)
		return;
	if (usermap_lookup(f, name, user, sizeof(user)) == 1 &&
	    memchr(user, '\0', sizeof(user)) == NULL)
		abort();
	fclose(f);
}

static void
fuzz_pac(const uint8_t *p, size_t n)
{
	struct pac_groups g;

	if (pac_logon_groups(p, n, &g) != 0)
		return;
	if (g.n_rids > PAC_MAX_RIDS || g.n_rids > g.n_groups ||
	    memchr(g.domain, '\0', sizeof(g.domain)) == NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 6) {
	case 0:
		fuzz_rep(data + 1, size - 1);
		break;
	case 1:
		fuzz_spnego(data + 1, size - 1);
		break;
	case 2:
		fuzz_authmsg(data + 1, size - 1);
		break;
	case 3:
		if (size > 1)
			fuzz_usermap(data + 1, size - 1);
		break;
	case 4:
		fuzz_req(data + 1, size - 1);
		break;
	default:
		fuzz_pac(data + 1, size - 1);
		break;
	}
	return 0;
}
