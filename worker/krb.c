/*
 * The ticket helper, `usmbd --child krb` (HACKING.md "Kerberos logons").
 *
 * The one process that reads a client's Kerberos ticket, with MIT krb5's
 * GSSAPI (gss_accept_sec_context): the master runs as root and never
 * parses a client's bytes, and the gates hold no keys.  It runs as the
 * `usmbd-krb` account under its own seccomp allow-list (worker/confine.c:
 * no sockets, no exec) and holds nothing but the service keys.
 *
 * The keytab is root's (an AD join leaves /etc/krb5.keytab root 0600):
 * the master opens it and passes the descriptor (MSG_KRB_KEYTAB).  The
 * keys are copied into a MEMORY: keytab of this process, through a memfd
 * that MIT's FILE: keytab code reads by its /proc/self/fd name (the
 * process is made dumpable for that moment only, so that its /proc
 * entries are its own), and the memfd is closed again.  A reload hands the
 * keytab again and the keys are replaced.
 *
 * For each MSG_KRB_REQ (a GSS-API krb5 token, as the client sent it) one
 * gss_accept_sec_context with a fresh context (kept for one more request
 * when SPNEGO chose Kerberos after another mechanism and the client's
 * mechListMIC is still to come: krb_mic_leg); the answer (MSG_KRB_REP,
 * daemon/krbmsg.h) names the client principal, the session key
 * (GSS_C_INQ_SSPI_SESSION_KEY: the authenticator's subkey when the client
 * sent one, as Windows and Samba use), the seconds the ticket has left and
 * the AP-REP for mutual authentication.  Replays are refused by the
 * library's replay cache (the default one, in /var/tmp, per uid).  A
 * malformed or hostile token is the library's to refuse; should it crash
 * the helper, only that request fails and the master starts another.
 *
 * PAC: whether the ticket carries one is reported (gss_get_name_attribute
 * "urn:mspac:"), and its logon info's group RIDs and domain
 * (proto/pac.c) for the master's log; usmbd takes groups from NSS.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5.h>
#include <profile.h>

#include "daemon/conf.h"
#include "daemon/krbmsg.h"
#include "daemon/log.h"
#include "daemon/msg.h"
#include "proto/cur.h"
#include "proto/ntstatus.h"
#include "proto/pac.h"
#include "worker/confine.h"
#include "worker/worker.h"

#define KRB_KEYTAB_MAX	(1 << 20)	/* bytes; keytabs are a few KiB */

struct krb {
	int		 chan;
	krb5_context	 ctx;
	krb5_keytab	 kt;		/* MEMORY:, NULL before the first keytab */
	gss_cred_id_t	 cred;
	unsigned	 gen;		/* keytabs loaded, names the MEMORY: one */
	OM_uint32	 skew;		/* libdefaults clockskew, seconds */
	uint8_t		 mbuf[MSG_BUF_SIZE];
	uint8_t		 obuf[sizeof(struct krbmsg_rep) + 128];
	struct krbmsg_rep rep;
};

static struct krb krb;

/* Reads all of fd into a new memfd; its descriptor or -1. */
static int
krb_copy_keytab(int fd)
{
	static uint8_t buf[65536];
	size_t total = 0;
	ssize_t n;
	int mfd;

	mfd = memfd_create("usmbd-keytab", MFD_CLOEXEC);
	if (mfd < 0)
		return -1;
	while ((n = pread(fd, buf, sizeof(buf), (off_t)total)) > 0) {
		total += (size_t)n;
		if (total > KRB_KEYTAB_MAX || write(mfd, buf, (size_t)n) != n) {
			errno = total > KRB_KEYTAB_MAX ? EFBIG : errno;
			n = -1;
			break;
		}
	}
	explicit_bzero(buf, sizeof(buf));
	if (n < 0) {
		close(mfd);
		return -1;
	}
	return mfd;
}

/* Copies every entry of the FILE: keytab name into MEMORY: keytab mem. */
static krb5_error_code
krb_copy_entries(const char *name, krb5_keytab mem, int *count)
{
	krb5_kt_cursor cur;
	krb5_keytab_entry e;
	krb5_keytab file;
	krb5_error_code ret;

	*count = 0;
	if ((ret = krb5_kt_resolve(krb.ctx, name, &file)) != 0)
		return ret;
	if ((ret = krb5_kt_start_seq_get(krb.ctx, file, &cur)) != 0)
		goto out;
	while (krb5_kt_next_entry(krb.ctx, file, &e, &cur) == 0) {
		ret = krb5_kt_add_entry(krb.ctx, mem, &e);
		krb5_free_keytab_entry_contents(krb.ctx, &e);
		if (ret != 0)
			break;
		(*count)++;
	}
	(void)krb5_kt_end_seq_get(krb.ctx, file, &cur);
out:
	(void)krb5_kt_close(krb.ctx, file);
	return ret;
}

/* MSG_KRB_KEYTAB: the master's descriptor of the keytab. */
static void
krb_load(int fd)
{
	char name[64], memname[64];
	krb5_keytab mem = NULL;
	gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
	OM_uint32 maj, min;
	krb5_error_code ret;
	int mfd, count = 0;

	mfd = krb_copy_keytab(fd);
	if (mfd < 0) {
		log_warn("krb: cannot read the keytab");
		return;
	}
	snprintf(name, sizeof(name), "FILE:/proc/self/fd/%d", mfd);
	snprintf(memname, sizeof(memname), "MEMORY:usmbd-%u", ++krb.gen);
	/* Our /proc/self/fd is root's unless we are dumpable. */
	(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	ret = krb5_kt_resolve(krb.ctx, memname, &mem);
	if (ret == 0)
		ret = krb_copy_entries(name, mem, &count);
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	close(mfd);
	if (ret != 0 || count == 0) {
		log_warnx("krb: the keytab gives no keys: %s", ret != 0 ?
		    krb5_get_error_message(krb.ctx, ret) : "it is empty");
		goto fail;
	}
	maj = gss_krb5_import_cred(&min, NULL, NULL, mem, &cred);
	if (GSS_ERROR(maj)) {
		log_warnx("krb: gss_krb5_import_cred failed (%u/%u)",
		    (unsigned)maj, (unsigned)min);
		goto fail;
	}
	if (krb.cred != GSS_C_NO_CREDENTIAL)
		(void)gss_release_cred(&min, &krb.cred);
	if (krb.kt != NULL)
		(void)krb5_kt_close(krb.ctx, krb.kt);
	krb.cred = cred;
	krb.kt = mem;
	log_info("krb: %d keys loaded", count);
	return;
fail:
	if (mem != NULL)
		(void)krb5_kt_close(krb.ctx, mem);
}

/* The library's words for a failure, into why. */
static void
krb_why(OM_uint32 maj, OM_uint32 min, char *why, size_t cap)
{
	gss_buffer_desc b1 = GSS_C_EMPTY_BUFFER, b2 = GSS_C_EMPTY_BUFFER;
	OM_uint32 ctx = 0, m;

	(void)gss_display_status(&m, maj, GSS_C_GSS_CODE, GSS_C_NO_OID, &ctx,
	    &b1);
	ctx = 0;
	(void)gss_display_status(&m, min, GSS_C_MECH_CODE, GSS_C_NO_OID, &ctx,
	    &b2);
	snprintf(why, cap, "%.*s: %.*s", (int)b1.length,
	    b1.value ? (const char *)b1.value : "", (int)b2.length,
	    b2.value ? (const char *)b2.value : "");
	(void)gss_release_buffer(&m, &b1);
	(void)gss_release_buffer(&m, &b2);
}

/*
 * The PAC's logon info (MS-PAC 2.5), when the library vouches for it
 * (its signature checked): group RIDs and the domain, for the master's
 * log only.  MIT's own KDC issues PACs without one.
 */
static void
krb_pac_groups(gss_name_t src, struct krbmsg_rep *r)
{
	gss_buffer_desc attr = { 20, (void *)"urn:mspac:logon-info" };
	gss_buffer_desc val = GSS_C_EMPTY_BUFFER, disp = GSS_C_EMPTY_BUFFER;
	struct pac_groups g;
	OM_uint32 maj, min;
	int authenticated = 0, complete = 0, more = -1;

	maj = gss_get_name_attribute(&min, src, &attr, &authenticated,
	    &complete, &val, &disp, &more);
	if (maj == GSS_S_COMPLETE && authenticated &&
	    pac_logon_groups(val.value, val.length, &g) == 0) {
		memcpy(r->pac_domain, g.domain, sizeof(r->pac_domain));
		r->pac_n_groups = g.n_groups;
		r->pac_n_rids = g.n_rids;
		memcpy(r->pac_rids, g.rids, g.n_rids * sizeof(g.rids[0]));
		r->pac_extra_sids = g.n_extra_sids;
	} else if (maj == GSS_S_COMPLETE)
		log_warnx("krb: the PAC's logon info does not decode");
	(void)gss_release_buffer(&min, &val);
	(void)gss_release_buffer(&min, &disp);
}

/* Does the client's name carry a PAC? */
static int
krb_has_pac(gss_name_t src)
{
	gss_buffer_desc attr = { 10, (void *)"urn:mspac:" };
	gss_buffer_desc val = GSS_C_EMPTY_BUFFER, disp = GSS_C_EMPTY_BUFFER;
	OM_uint32 maj, min;
	int authenticated = 0, complete = 0, more = -1;

	maj = gss_get_name_attribute(&min, src, &attr, &authenticated,
	    &complete, &val, &disp, &more);
	(void)gss_release_buffer(&min, &val);
	(void)gss_release_buffer(&min, &disp);
	return maj == GSS_S_COMPLETE && authenticated;
}

/* Fills r from an established context; 0 or -1 with r->why. */
static int
krb_answer(gss_ctx_id_t ctx, gss_name_t src, OM_uint32 time_rec,
    struct krbmsg_rep *r)
{
	gss_buffer_desc name = GSS_C_EMPTY_BUFFER;
	gss_buffer_set_t keys = GSS_C_NO_BUFFER_SET;
	OM_uint32 maj, min;
	int rc = -1;

	maj = gss_display_name(&min, src, &name, NULL);
	if (GSS_ERROR(maj) || name.length == 0 ||
	    name.length >= sizeof(r->principal) ||
	    memchr(name.value, '\0', name.length) != NULL) {
		snprintf(r->why, sizeof(r->why), "no usable client name");
		goto out;
	}
	memcpy(r->principal, name.value, name.length);
	r->principal[name.length] = '\0';
	maj = gss_inquire_sec_context_by_oid(&min, ctx,
	    GSS_C_INQ_SSPI_SESSION_KEY, &keys);
	if (GSS_ERROR(maj) || keys == GSS_C_NO_BUFFER_SET || keys->count < 1 ||
	    keys->elements[0].length == 0 ||
	    keys->elements[0].length > sizeof(r->key)) {
		snprintf(r->why, sizeof(r->why), "no session key");
		goto out;
	}
	r->key_len = (uint32_t)keys->elements[0].length;
	memcpy(r->key, keys->elements[0].value, r->key_len);
	explicit_bzero(keys->elements[0].value, keys->elements[0].length);
	/*
	 * MIT's acceptor counts the clock skew allowance into time_rec
	 * (and gss_inquire_context's lifetime): the ticket itself ends that
	 * much earlier, and that is when the session must.
	 */
	if (time_rec != GSS_C_INDEFINITE)
		time_rec = time_rec > krb.skew ? time_rec - krb.skew : 1;
	r->lifetime = time_rec == GSS_C_INDEFINITE ? 0x7fffffff : time_rec;
	r->pac = (uint32_t)krb_has_pac(src);
	if (r->pac)
		krb_pac_groups(src, r);
	rc = 0;
out:
	(void)gss_release_buffer(&min, &name);
	if (keys != GSS_C_NO_BUFFER_SET)
		(void)gss_release_buffer_set(&min, &keys);
	return rc;
}

/*
 * A context kept for the client's mechListMIC (Kerberos chosen after
 * another mechanism, RFC 4178 5): the MIC comes in the client's next
 * SESSION_SETUP, after our AP-REP, and only this context can check it.
 */
struct krb_kept {
	uint64_t	 id;		/* random, never 0; 0 = free slot */
	gss_ctx_id_t	 ctx;
	gss_name_t	 src;
	OM_uint32	 time_rec;	/* as gss_accept_sec_context said */
	int64_t		 born;		/* CLOCK_MONOTONIC seconds */
	uint32_t	 mt_len;
	uint8_t		 mt[AUTH_MECH_TYPES_MAX];	/* what the MICs cover */
};

static struct krb_kept krb_kept[KRBMSG_CTX_MAX];

static int64_t
krb_now(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec;
}

static void
krb_kept_free(struct krb_kept *k)
{
	OM_uint32 min;

	if (k->src != GSS_C_NO_NAME)
		(void)gss_release_name(&min, &k->src);
	if (k->ctx != GSS_C_NO_CONTEXT)
		(void)gss_delete_sec_context(&min, &k->ctx, GSS_C_NO_BUFFER);
	memset(k, 0, sizeof(*k));
}

/* Drops contexts past KRBMSG_CTX_SECS; a free slot (the oldest if none). */
static struct krb_kept *
krb_kept_slot(void)
{
	struct krb_kept *free_slot = NULL, *oldest = &krb_kept[0];
	int64_t now = krb_now();
	int i;

	for (i = 0; i < KRBMSG_CTX_MAX; i++) {
		struct krb_kept *k = &krb_kept[i];

		if (k->id != 0 && now - k->born > KRBMSG_CTX_SECS)
			krb_kept_free(k);
		if (k->id == 0 && free_slot == NULL)
			free_slot = k;
		if (k->born < oldest->born)
			oldest = k;
	}
	if (free_slot != NULL)
		return free_slot;
	krb_kept_free(oldest);
	return oldest;
}

static struct krb_kept *
krb_kept_find(uint64_t id)
{
	int i;

	for (i = 0; i < KRBMSG_CTX_MAX; i++)
		if (krb_kept[i].id == id && id != 0) {
			if (krb_now() - krb_kept[i].born <= KRBMSG_CTX_SECS)
				return &krb_kept[i];
			krb_kept_free(&krb_kept[i]);
			break;
		}
	return NULL;
}

/* Our mechListMIC over mt into r->mic; 0 or -1 with r->why. */
static int
krb_mic_make(gss_ctx_id_t ctx, const uint8_t *mt, size_t mt_len,
    struct krbmsg_rep *r)
{
	gss_buffer_desc in = { mt_len, (void *)mt }, mic = GSS_C_EMPTY_BUFFER;
	OM_uint32 maj, min;
	int rc = -1;

	maj = gss_get_mic(&min, ctx, GSS_C_QOP_DEFAULT, &in, &mic);
	if (GSS_ERROR(maj))
		krb_why(maj, min, r->why, sizeof(r->why));
	else if (mic.length == 0 || mic.length > sizeof(r->mic))
		snprintf(r->why, sizeof(r->why), "mechListMIC of %zu bytes",
		    (size_t)mic.length);
	else {
		memcpy(r->mic, mic.value, mic.length);
		r->mic_len = (uint32_t)mic.length;
		rc = 0;
	}
	(void)gss_release_buffer(&min, &mic);
	return rc;
}

/*
 * The client's mechListMIC over mt; 0 or -1 with r->why.  Only a clean
 * COMPLETE passes: a duplicate or old token is a replay of the list.
 */
static int
krb_mic_check(gss_ctx_id_t ctx, const uint8_t *mt, size_t mt_len,
    const uint8_t *mic, size_t mic_len, struct krbmsg_rep *r)
{
	gss_buffer_desc in = { mt_len, (void *)mt };
	gss_buffer_desc tok = { mic_len, (void *)mic };
	OM_uint32 maj, min;

	maj = gss_verify_mic(&min, ctx, &in, &tok, NULL);
	if (maj == GSS_S_COMPLETE)
		return 0;
	if (GSS_ERROR(maj))
		krb_why(maj, min, r->why, sizeof(r->why));
	else
		snprintf(r->why, sizeof(r->why), "mechListMIC replayed (%u)",
		    (unsigned)maj);
	log_warnx("krb: the client's SPNEGO mechListMIC does not verify: %s",
	    r->why);
	return -1;
}

/*
 * The second leg of Kerberos after another mechanism: the client's MIC
 * for a kept context; the answer is the ticket's, the context dropped.
 */
static void
krb_finish(const struct krbmsg_req *q, struct krbmsg_rep *r)
{
	struct krb_kept *k = krb_kept_find(q->ctx);
	OM_uint32 time_rec;
	int64_t age;

	if (k == NULL) {
		snprintf(r->why, sizeof(r->why), "no such SPNEGO exchange "
		    "(ended, or older than %d s)", KRBMSG_CTX_SECS);
		return;
	}
	if (krb_mic_check(k->ctx, k->mt, k->mt_len, q->mic, q->mic_len,
	    r) != 0)
		goto out;
	age = krb_now() - k->born;
	time_rec = k->time_rec;
	if (time_rec != GSS_C_INDEFINITE)
		time_rec = (int64_t)time_rec > age ?
		    time_rec - (OM_uint32)age : 1;
	if (krb_answer(k->ctx, k->src, time_rec, r) == 0)
		r->status = 0;
out:
	krb_kept_free(k);
}

/*
 * After the AP-REQ was accepted, with the client's mechTypes: our MIC,
 * and the client's checked now or the context kept for it.  0 when ctx
 * and src were taken (kept), else 1 (the caller frees them).
 */
static int
krb_mic_leg(const struct krbmsg_req *q, gss_ctx_id_t ctx, gss_name_t src,
    OM_uint32 time_rec, struct krbmsg_rep *r)
{
	struct krb_kept *k;
	uint64_t id = 0;

	if (krb_mic_make(ctx, q->mech_types, q->mech_types_len, r) != 0)
		return 1;
	if (q->mic_len > 0) {
		if (krb_mic_check(ctx, q->mech_types, q->mech_types_len, q->mic,
		    q->mic_len, r) == 0 && krb_answer(ctx, src, time_rec, r) == 0)
			r->status = 0;
		return 1;
	}
	while (id == 0)
		if (getrandom(&id, sizeof(id), 0) != sizeof(id)) {
			snprintf(r->why, sizeof(r->why), "getrandom failed");
			return 1;
		}
	k = krb_kept_slot();
	k->id = id;
	k->ctx = ctx;
	k->src = src;
	k->time_rec = time_rec;
	k->born = krb_now();
	memcpy(k->mt, q->mech_types, q->mech_types_len);
	k->mt_len = q->mech_types_len;
	r->ctx = id;
	r->status = STATUS_MORE_PROCESSING_REQUIRED;
	return 0;
}

/* MSG_KRB_REQ: one token, one context, one answer (or a kept context). */
static void
krb_accept(uint32_t id, const uint8_t *p, size_t len)
{
	struct krbmsg_rep *r = &krb.rep;
	struct krbmsg_req q;
	gss_ctx_id_t ctx = GSS_C_NO_CONTEXT;
	gss_buffer_desc in, out = GSS_C_EMPTY_BUFFER;
	gss_name_t src = GSS_C_NO_NAME;
	OM_uint32 maj, min, flags = 0, time_rec = 0;
	int n;

	memset(r, 0, sizeof(*r));
	r->status = STATUS_LOGON_FAILURE;
	if (krbmsg_req_decode(&q, p, len) != 0) {
		snprintf(r->why, sizeof(r->why), "malformed request");
		goto send;
	}
	if (q.ctx != 0) {
		krb_finish(&q, r);
		goto send;
	}
	if (krb.cred == GSS_C_NO_CREDENTIAL) {
		snprintf(r->why, sizeof(r->why), "no keytab loaded");
		goto send;
	}
	in.length = q.token_len;
	in.value = (void *)q.token;
	maj = gss_accept_sec_context(&min, &ctx, krb.cred, &in,
	    GSS_C_NO_CHANNEL_BINDINGS, &src, NULL, &out, &flags, &time_rec,
	    NULL);
	if (maj != GSS_S_COMPLETE) {
		/* CONTINUE_NEEDED: DCE-style or user-to-user, not for SMB. */
		if (GSS_ERROR(maj))
			krb_why(maj, min, r->why, sizeof(r->why));
		else
			snprintf(r->why, sizeof(r->why), "more legs wanted");
		goto send;
	}
	if (out.length > sizeof(r->out)) {
		snprintf(r->why, sizeof(r->why), "AP-REP too large");
		goto send;
	}
	memcpy(r->out, out.value, out.length);
	r->out_len = (uint32_t)out.length;
	if (q.mech_types_len > 0) {
		if (krb_mic_leg(&q, ctx, src, time_rec, r) == 0) {
			ctx = GSS_C_NO_CONTEXT;		/* kept */
			src = GSS_C_NO_NAME;
		}
		goto send;
	}
	if (krb_answer(ctx, src, time_rec, r) != 0)
		goto send;
	r->status = 0;
send:
	if (r->status != 0 && r->status != STATUS_MORE_PROCESSING_REQUIRED) {
		/* A failure carries no key, token or MIC. */
		r->key_len = r->out_len = r->mic_len = 0;
		r->ctx = 0;
	}
	n = krbmsg_rep_encode(r, krb.obuf, sizeof(krb.obuf));
	if (n < 0 || msg_send(krb.chan, MSG_KRB_REP, id, krb.obuf, (size_t)n,
	    -1) != 0)
		log_warnx("krb: cannot answer request %u", id);
	if (n > 0)
		explicit_bzero(krb.obuf, (size_t)n);
	explicit_bzero(r, sizeof(*r));
	(void)gss_release_buffer(&min, &out);
	if (src != GSS_C_NO_NAME)
		(void)gss_release_name(&min, &src);
	if (ctx != GSS_C_NO_CONTEXT)
		(void)gss_delete_sec_context(&min, &ctx, GSS_C_NO_BUFFER);
}

/* krb5.conf's clockskew (MIT's default 300 s). */
static void
krb_read_skew(void)
{
	struct _profile_t *prof = NULL;
	int skew = 300;

	if (krb5_get_profile(krb.ctx, &prof) == 0) {
		(void)profile_get_integer(prof, "libdefaults", "clockskew", NULL,
		    300, &skew);
		profile_release(prof);
	}
	krb.skew = skew > 0 ? (OM_uint32)skew : 0;
}

/*
 * GSSAPI's mechanism glue reads /etc/gss/mech and mech.d and loads what
 * they name (dlopen: executable mappings) at its first call: make that
 * call before the allow-list, which refuses PROT_EXEC mappings.
 */
static void
krb_warm_up(void)
{
	gss_OID_set mechs = GSS_C_NO_OID_SET;
	OM_uint32 min;

	if (!GSS_ERROR(gss_indicate_mechs(&min, &mechs)))
		(void)gss_release_oid_set(&min, &mechs);
}

int
krb_main(struct conf *conf, int chan)
{
	uint8_t role[4];
	struct msg m;
	int rc;

	(void)conf;
	krb.chan = chan;
	krb.cred = GSS_C_NO_CREDENTIAL;
	user_drop_krb();
	if (krb5_init_context(&krb.ctx) != 0) {
		log_warnx("krb: krb5_init_context failed");
		return 1;
	}
	krb_read_skew();
	krb_warm_up();
	if ((rc = confine_krb()) != 0) {
		errno = -rc;
		log_warn("krb: cannot install its seccomp filter");
		return 1;
	}
	le32_put(role, MSG_ROLE_KRB);
	if (msg_send(chan, MSG_HELLO, 0, role, sizeof(role), -1) != 0)
		return 1;
	for (;;) {
		rc = msg_recv(chan, &m, krb.mbuf, sizeof(krb.mbuf));
		if (rc == -EPIPE)
			return 0;
		if (rc == -EAGAIN || rc == -EINTR)
			continue;
		if (rc != 0) {
			errno = -rc;
			log_warn("krb: channel");
			return 1;
		}
		switch (m.type) {
		case MSG_KRB_KEYTAB:
			if (m.fd >= 0)
				krb_load(m.fd);
			break;
		case MSG_KRB_REQ:
			krb_accept(m.id, m.payload, m.len);
			break;
		case MSG_SHUTDOWN:
			return 0;
		default:
			break;
		}
		if (m.fd >= 0)
			close(m.fd);
	}
}
