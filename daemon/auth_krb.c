/*
 * Kerberos logons, the master's part.  The master never reads a ticket:
 * the AP-REQ a gate or worker forwarded goes to the ticket helper as it
 * came (MSG_KRB_REQ), and the helper answers principal, session key,
 * lifetime and AP-REP (daemon/krbmsg.h), decoded here with bounds checks
 * like any child's message.  What the master adds is what it does for
 * NTLM: the Unix account (the principal's name when its realm is our
 * `realm`, or `username map`; it must exist through NSS, must not be
 * root, and a disabled passdb entry refuses it; no passdb entry is
 * needed), the failure throttle and the routing verdict (auth_answer).
 *
 * A logon waits for the helper at most AUTH_KRB_TIMEOUT_MS; a helper that
 * dies fails the logons in flight, and the master starts another.
 *
 * Kerberos after another mechanism (daemon/krbmsg.h): the helper's
 * STATUS_MORE_PROCESSING_REQUIRED (AP-REP, our mechListMIC, the context
 * waiting for the client's) goes back as it is, no verdict recorded; the
 * verdict is made when the client's MIC has been checked.
 */
#include "daemon/auth_krb.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/auth.h"
#include "daemon/authmsg.h"
#include "daemon/conf.h"
#include "daemon/krbmsg.h"
#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/msg.h"
#include "daemon/passdb.h"
#include "daemon/spawn.h"
#include "daemon/usermap.h"
#include "proto/ntstatus.h"

#define AUTH_KRB_PENDING	64	/* logons waiting for the helper */
#define AUTH_KRB_TIMEOUT_MS	5000

struct auth_krb_pending {
	int		 in_use;
	pid_t		 pid;		/* the gate or worker that asked */
	uint32_t	 child_id;	/* its MSG_AUTH_REQ id */
	uint32_t	 helper_id;	/* our MSG_KRB_REQ id */
	int64_t		 due_ms;
	char		 client[64];
};

static struct auth_krb_pending	auth_krb_q[AUTH_KRB_PENDING];
static uint32_t			auth_krb_next_id = 1;

static struct child *
auth_krb_helper(void)
{
	int i;

	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];

		if (c->pid > 0 && c->role == CHILD_KRB && c->hello &&
		    !c->dying && c->chan >= 0)
			return c;
	}
	return NULL;
}

/* Answers the asker of p with a failure (it is logged by the caller). */
static void
auth_krb_fail(struct auth_krb_pending *p, uint32_t status)
{
	struct authmsg_rep rep;
	struct child *c = spawn_find(p->pid);

	p->in_use = 0;
	memset(&rep, 0, sizeof(rep));
	rep.status = status;
	master.auth_failures++;
	if (c != NULL && c->chan >= 0 && !c->dying)
		auth_answer(c, p->child_id, p->client, "", &rep);
}

void
auth_krb_start(struct child *c, uint32_t id, const struct authmsg_req *req)
{
	static uint8_t kbuf[MSG_MAX_PAYLOAD];
	struct auth_krb_pending *p = NULL;
	struct child *h = auth_krb_helper();
	struct krbmsg_req kq;
	const char *why = NULL;
	int i, n;

	if (conf_keytab_path(master.conf) == NULL)
		why = "Kerberos is off (`kerberos method`)";
	else if (h == NULL)
		why = "the ticket helper is not running";
	else if (req->authenticate_len == 0 || req->negotiate_len != 0 ||
	    req->challenge_len != 0 || req->authenticate_len > MSG_MAX_PAYLOAD ||
	    req->mech_types_len > AUTH_MECH_TYPES_MAX ||
	    req->mic_len > AUTH_MIC_MAX ||
	    (req->mech == AUTHMSG_MECH_KRB5_MIC) != (req->krb_ctx != 0))
		why = "malformed request";
	for (i = 0; why == NULL && i < AUTH_KRB_PENDING; i++)
		if (!auth_krb_q[i].in_use) {
			p = &auth_krb_q[i];
			break;
		}
	if (why == NULL && p == NULL)
		why = "too many Kerberos logons in flight";
	if (why != NULL) {
		struct auth_krb_pending tmp;

		log_warnx("Kerberos logon from %s refused: %s", req->client, why);
		memset(&tmp, 0, sizeof(tmp));
		tmp.pid = c->pid;
		tmp.child_id = id;
		snprintf(tmp.client, sizeof(tmp.client), "%s", req->client);
		auth_krb_fail(&tmp, STATUS_LOGON_FAILURE);
		return;
	}
	p->helper_id = auth_krb_next_id++;
	if (auth_krb_next_id == 0)
		auth_krb_next_id = 1;
	p->pid = c->pid;
	p->child_id = id;
	p->due_ms = master_now_ms() + AUTH_KRB_TIMEOUT_MS;
	snprintf(p->client, sizeof(p->client), "%s", req->client);
	p->in_use = 1;
	memset(&kq, 0, sizeof(kq));
	kq.ctx = req->krb_ctx;
	if (req->mech == AUTHMSG_MECH_KRB5_MIC) {
		kq.mic = req->authenticate;
		kq.mic_len = req->authenticate_len;
	} else {
		kq.token = req->authenticate;
		kq.token_len = req->authenticate_len;
		kq.mech_types = req->mech_types;
		kq.mech_types_len = req->mech_types_len;
		kq.mic = req->mic;
		kq.mic_len = req->mic_len;
	}
	/* Client bytes, copied unread; dropped when the helper is swamped. */
	n = krbmsg_req_encode(&kq, kbuf, sizeof(kbuf));
	if (n < 0 || spawn_forward(h, MSG_KRB_REQ, p->helper_id, kbuf,
	    (size_t)n, -1) != 0) {
		log_warnx("Kerberos logon from %s: the ticket helper is busy",
		    p->client);
		auth_krb_fail(p, STATUS_LOGON_FAILURE);
	}
}

/* Looks name up in `username map`: 1 and out, 0 none, -1 unreadable. */
static int
auth_krb_usermap(const struct conf *conf, const char *name, char *out,
    size_t cap)
{
	FILE *f;
	int rc;

	if (conf->username_map == NULL || conf->username_map[0] == '\0')
		return 0;
	if ((f = fopen(conf->username_map, "re")) == NULL) {
		log_warn("username map %s", conf->username_map);
		return -1;
	}
	rc = usermap_lookup(f, name, out, cap);
	fclose(f);
	return rc < 0 ? -1 : rc;
}

int
auth_krb_map(const struct conf *conf, const char *principal, char *out,
    size_t cap, const char **why)
{
	const char *at = strrchr(principal, '@');
	char name[KRBMSG_PRINCIPAL_MAX];
	size_t n;
	int rc;

	/* The whole principal first: a map may name other realms' users. */
	rc = auth_krb_usermap(conf, principal, out, cap);
	if (rc < 0) {
		*why = "`username map` unreadable";
		return -1;
	}
	if (rc == 1)
		return 0;
	if (at == NULL || conf->realm == NULL || conf->realm[0] == '\0' ||
	    strcasecmp(at + 1, conf->realm) != 0) {
		*why = "not of our `realm`, and `username map` does not map it";
		return -1;
	}
	n = (size_t)(at - principal);
	if (n == 0 || n >= sizeof(name) || memchr(principal, '/', n) != NULL) {
		*why = "not a user principal";
		return -1;
	}
	memcpy(name, principal, n);
	name[n] = '\0';
	rc = auth_krb_usermap(conf, name, out, cap);
	if (rc < 0) {
		*why = "`username map` unreadable";
		return -1;
	}
	if (rc == 0) {
		if (n >= cap) {
			*why = "name too long";
			return -1;
		}
		memcpy(out, name, n + 1);
	}
	return 0;
}

/*
 * The PAC's groups, as the helper decoded them: information for the
 * admin (which AD groups the ticket names), never authority: the
 * session's groups are the Unix account's, from NSS.
 */
static void
auth_krb_log_pac(const struct krbmsg_rep *kr)
{
	char rids[PAC_MAX_RIDS * 11 + 1];
	size_t k = 0;
	uint32_t i;

	rids[0] = '\0';
	for (i = 0; i < kr->pac_n_rids && k < sizeof(rids); i++)
		k += (size_t)snprintf(rids + k, sizeof(rids) - k, " %u",
		    (unsigned)kr->pac_rids[i]);
	log_info("PAC of %s: domain %s, %u group RIDs:%s%s; %u extra SIDs "
	    "(logged only: groups come from NSS)", kr->principal,
	    kr->pac_domain[0] != '\0' ? kr->pac_domain : "(none)",
	    (unsigned)kr->pac_n_groups, rids,
	    kr->pac_n_groups > kr->pac_n_rids ? " ..." : "",
	    (unsigned)kr->pac_extra_sids);
}

/* The verdict for a ticket the helper judged; never fails the child. */
static void
auth_krb_verdict(const struct krbmsg_rep *kr, const char *client,
    struct authmsg_rep *rep, char name[PASSDB_NAME_MAX])
{
	const char *why = NULL, *at = strrchr(kr->principal, '@');
	char user[AUTH_NAME_MAX];
	struct passdb_entry e;
	struct passwd *pw;

	memset(rep, 0, sizeof(*rep));
	rep->status = STATUS_LOGON_FAILURE;
	name[0] = '\0';
	if (kr->status != 0) {
		why = kr->why[0] != '\0' ? kr->why : "ticket refused";
		goto fail;
	}
	if (auth_krb_map(master.conf, kr->principal, user, sizeof(user),
	    &why) != 0)
		goto fail;
	snprintf(name, PASSDB_NAME_MAX, "%s", user);
	/* The Unix account through NSS: users of sssd or winbind work. */
	pw = getpwnam(user);
	if (pw == NULL || pw->pw_uid == 0) {
		why = pw == NULL ? "no such Unix account" : "Unix account is root";
		goto fail;
	}
	if (master.passdb != NULL && passdb_get(master.passdb, pw->pw_name,
	    &e) == 0 && (e.flags & PASSDB_FLAG_DISABLED)) {
		rep->status = STATUS_ACCOUNT_DISABLED;
		why = "account disabled";
		goto fail;
	}
	rep->status = STATUS_SUCCESS;
	rep->uid = pw->pw_uid;
	rep->gid = pw->pw_gid;
	snprintf(rep->user, sizeof(rep->user), "%s", pw->pw_name);
	if (at != NULL)
		snprintf(rep->domain, sizeof(rep->domain), "%.*s",
		    (int)sizeof(rep->domain) - 1, at + 1);
	/*
	 * SMB takes the first 16 bytes of the GSS session key (MS-SMB2
	 * 3.3.5.5.3, as Windows and Samba), zero-padded when shorter.
	 */
	memcpy(rep->session_key, kr->key, kr->key_len < 16 ? kr->key_len : 16);
	if (kr->key_len > 16) {
		rep->full_key_len = kr->key_len < AUTH_FULL_KEY_MAX ?
		    kr->key_len : AUTH_FULL_KEY_MAX;
		memcpy(rep->full_key, kr->key, rep->full_key_len);
	}
	rep->lifetime = kr->lifetime > 0 ? kr->lifetime : 1;
	rep->mech_out_len = kr->out_len;
	memcpy(rep->mech_out, kr->out, kr->out_len);
	rep->mic_len = kr->mic_len;
	memcpy(rep->mic, kr->mic, kr->mic_len);
	master.auth_successes++;
	log_info("Kerberos logon of %s (%s) from %s; the ticket ends in %u s%s",
	    kr->principal, rep->user, client, (unsigned)kr->lifetime,
	    kr->pac ? " (PAC present)" : "");
	if (kr->pac_domain[0] != '\0' || kr->pac_n_groups > 0)
		auth_krb_log_pac(kr);
	return;
fail:
	explicit_bzero(rep->session_key, sizeof(rep->session_key));
	explicit_bzero(rep->full_key, sizeof(rep->full_key));
	rep->full_key_len = 0;
	rep->uid = rep->gid = 0;
	rep->user[0] = '\0';
	master.auth_failures++;
	log_warnx("Kerberos logon failure from %s: principal \"%s\": %s", client,
	    kr->principal, why);
}

/*
 * The helper accepted the AP-REQ and waits for the client's mechListMIC:
 * the AP-REP, our MIC and the context go to the asker, with no identity
 * and no key (nothing is vouched for yet, so no verdict is recorded).
 */
static void
auth_krb_continue(struct child *c, const struct auth_krb_pending *p,
    const struct krbmsg_rep *kr)
{
	struct authmsg_rep rep;
	uint8_t buf[1024];
	int len;

	if (c == NULL || c->chan < 0 || c->dying)
		return;
	memset(&rep, 0, sizeof(rep));
	rep.status = STATUS_MORE_PROCESSING_REQUIRED;
	rep.mech_out_len = kr->out_len;
	memcpy(rep.mech_out, kr->out, kr->out_len);
	rep.mic_len = kr->mic_len;
	memcpy(rep.mic, kr->mic, kr->mic_len);
	rep.krb_ctx = kr->ctx;
	len = authmsg_rep_encode(&rep, buf, sizeof(buf));
	if (len < 0) {
		log_warnx("cannot encode an auth reply");
		return;
	}
	/* The previous verdict stays void (auth_handle_req) until the end. */
	(void)spawn_send(c, MSG_AUTH_REP, p->child_id, buf, (size_t)len);
}

int
auth_krb_rep(struct child *helper, const struct msg *m)
{
	static struct krbmsg_rep kr;
	struct authmsg_rep rep;
	struct auth_krb_pending *p = NULL;
	char name[PASSDB_NAME_MAX];
	struct child *c;
	int i;

	if (krbmsg_rep_decode(&kr, m->payload, m->len) != 0)
		return -1;
	for (i = 0; i < AUTH_KRB_PENDING; i++)
		if (auth_krb_q[i].in_use && auth_krb_q[i].helper_id == m->id) {
			p = &auth_krb_q[i];
			break;
		}
	if (p == NULL) {
		/* Answered already (timed out). */
		log_debug(2, "ticket helper %d: late answer %u", (int)helper->pid,
		    m->id);
		explicit_bzero(&kr, sizeof(kr));
		return 0;
	}
	p->in_use = 0;
	c = spawn_find(p->pid);
	if (kr.status == STATUS_MORE_PROCESSING_REQUIRED) {
		auth_krb_continue(c, p, &kr);
		explicit_bzero(&kr, sizeof(kr));
		return 0;
	}
	auth_krb_verdict(&kr, p->client, &rep, name);
	explicit_bzero(&kr, sizeof(kr));
	if (c != NULL && c->chan >= 0 && !c->dying)
		auth_answer(c, p->child_id, p->client, name, &rep);
	explicit_bzero(&rep, sizeof(rep));
	return 0;
}

void
auth_krb_keytab(struct child *helper)
{
	const char *path = conf_keytab_path(master.conf);
	struct stat st;
	int fd;

	if (path == NULL)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		log_warn("keytab %s: Kerberos logons will fail", path);
		return;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		log_warnx("keytab %s is not a regular file: Kerberos logons "
		    "will fail", path);
		close(fd);
		return;
	}
	if (spawn_forward(helper, MSG_KRB_KEYTAB, 0, NULL, 0, fd) != 0)
		log_warnx("keytab %s: could not hand it to the ticket helper",
		    path);
	close(fd);
}

void
auth_krb_gone(struct child *helper)
{
	int i, n = 0;

	for (i = 0; i < AUTH_KRB_PENDING; i++)
		if (auth_krb_q[i].in_use) {
			auth_krb_fail(&auth_krb_q[i], STATUS_LOGON_FAILURE);
			n++;
		}
	if (n > 0)
		log_warnx("ticket helper %d gone: %d Kerberos logons failed",
		    (int)helper->pid, n);
}

void
auth_krb_tick(void)
{
	int64_t now = master_now_ms();
	int i;

	for (i = 0; i < AUTH_KRB_PENDING; i++)
		if (auth_krb_q[i].in_use && auth_krb_q[i].due_ms <= now) {
			log_warnx("Kerberos logon from %s: the ticket helper did "
			    "not answer in time", auth_krb_q[i].client);
			auth_krb_fail(&auth_krb_q[i], STATUS_LOGON_FAILURE);
		}
}

int
auth_krb_waiting(void)
{
	int i;

	for (i = 0; i < AUTH_KRB_PENDING; i++)
		if (auth_krb_q[i].in_use)
			return 1;
	return 0;
}
