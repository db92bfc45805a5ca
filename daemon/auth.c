/*
 * Authentication verdicts.  A gate (or a worker, for a later session) sends
 * the NTLMSSP messages of an exchange; the master checks the NTLMv2 response
 * against the passdb and answers with the verdict, the session key and the
 * Unix identity.  The master remembers the verdict it gave each child: that,
 * not the child's word, decides where a connection is routed.
 *
 * A verdict with a session key goes only to whom it belongs: a gate, or a
 * worker of the verdict's own uid (a worker forwarding another user's
 * exchange gets the verdict without the key; it refuses it, or asks for
 * the session to be relayed, and the key goes to that user's worker).  A server challenge is
 * answered once: the challenges of the last AUTH_SEEN_MAX successful
 * verdicts are remembered, and an exchange that names one of them again (a
 * replay, by a child that kept it) is a logon failure.  Only successes
 * are remembered, so a child cannot push an old challenge out of the
 * table with made-up exchanges: it would need that many good logons.
 *
 * Brute force is slowed per client address and per account name: from the
 * third failure within a minute on, replies to that address, and replies
 * for that name from anywhere, are delayed (0.5 s doubling up to 5 s; the
 * larger of the two) on a timer queue, so the master's loop never sleeps.
 *
 * A failure writes nothing on its way: the counts go to a table in memory
 * (auth_acct) and from there into the passdb in one synced transaction
 * every AUTH_FLUSH_MS (passdb_note_failures), off the path of any reply.
 * An unknown name costs the same as a known one with a wrong password (the
 * NTLMv2 check runs against a random hash), and both are throttled by name
 * alike, so timing tells no user names.  With the lockout policy
 * (`usmbctl user policy`, pdbedit's "bad lockout attempt" and "lockout
 * duration") an account with that many failures in a row is refused with
 * ACCOUNT_LOCKED_OUT, right password or not, until the duration is over or
 * `usmbctl user enable` clears it.
 */
#include "daemon/auth.h"

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <sys/random.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon/auth_krb.h"
#include "daemon/authmsg.h"
#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/msg.h"
#include "daemon/passdb.h"
#include "daemon/route.h"
#include "daemon/spawn.h"
#include "proto/cur.h"
#include "proto/ntlmssp.h"
#include "proto/ntstatus.h"

#define AUTH_WINDOW_MS		60000	/* failures older than this are forgotten */
#define AUTH_FREE_FAILURES	2	/* replies after more are delayed */
#define AUTH_DELAY_MIN_MS	500
#define AUTH_DELAY_MAX_MS	5000
#define AUTH_MAX_ADDRS		256
#define AUTH_MAX_DELAYED	256
#define AUTH_SEEN_MAX		16384	/* challenges of good verdicts kept */
#define AUTH_MAX_ACCTS		256
#define AUTH_FLUSH_MS		5000	/* batched failure counts to the passdb */

struct auth_addr {
	char		addr[64];
	unsigned	failures;
	int64_t		last_ms;
};

struct auth_delayed {
	int		 in_use;
	int64_t		 due_ms;
	pid_t		 pid;
	uint32_t	 id;
	struct authmsg_rep rep;
};

/*
 * An account name's recent failures (the throttle, any name) and, for a
 * passdb user, what the passdb does not have yet: failures to add, a
 * lockout to record, a reset of an expired lockout.
 */
struct auth_acct {
	char		name[PASSDB_NAME_MAX];	/* lower-cased */
	unsigned	failures;		/* in the window, for the delay */
	int64_t		last_ms;
	uint32_t	pending;		/* failed logons not yet written */
	int		reset;			/* an expired lockout to clear */
	time_t		locked_at;		/* a lockout not yet written */
};

static struct auth_addr		auth_addrs[AUTH_MAX_ADDRS];
static struct auth_acct		auth_accts[AUTH_MAX_ACCTS];
static int64_t			auth_flushed_ms;
static uint8_t			auth_decoy_hash[16];
static int			auth_have_decoy;
static struct auth_delayed	auth_queue[AUTH_MAX_DELAYED];

static char	auth_passdb_dir[4096];

static void	auth_flush(void);

/* The server challenges of the last good verdicts, a ring. */
static uint64_t	auth_seen[AUTH_SEEN_MAX];
static unsigned	auth_seen_next;

/*
 * The ServerChallenge of a CHALLENGE message (MS-NLMP 2.2.1.2, offset 24):
 * 0 and *out, or -1 when the message is too short for one.
 */
static int
auth_server_challenge(const struct authmsg_req *req, uint64_t *out)
{
	struct cur c;

	cur_init(&c, req->challenge, req->challenge_len);
	cur_skip(&c, 24);
	*out = cur_le64(&c);
	return c.err ? -1 : 0;
}

/* Was this challenge answered before?  If not, it is now. */
static int
auth_challenge_replayed(uint64_t ch)
{
	for (unsigned i = 0; i < AUTH_SEEN_MAX; i++)
		if (auth_seen[i] == ch && ch != 0)
			return 1;
	auth_seen[auth_seen_next] = ch;
	auth_seen_next = (auth_seen_next + 1) % AUTH_SEEN_MAX;
	return 0;
}

/*
 * An LMDB env must never be open twice in one process (closing one handle
 * drops the process's locks on the lock file, and a writer then resets the
 * reader table under the other): a reload keeps the open handle when the
 * directory did not change, and closes before reopening when it did.
 */
int
auth_passdb_open(const struct conf *conf)
{
	struct passdb *db = NULL;
	int rc;

	if (master.passdb != NULL &&
	    strcmp(auth_passdb_dir, conf->private_dir) == 0)
		return 0;
	auth_passdb_close();
	rc = passdb_open(conf->private_dir, 0, &db);
	if (rc != 0) {
		errno = -rc;
		log_warn("passdb %s", conf->private_dir);
		return rc;
	}
	snprintf(auth_passdb_dir, sizeof(auth_passdb_dir), "%s",
	    conf->private_dir);
	master.passdb = db;
	return 0;
}

void
auth_passdb_close(void)
{
	if (master.passdb != NULL) {
		auth_flush();
		passdb_close(master.passdb);
	}
	master.passdb = NULL;
}

int
auth_throttle_delay_ms(unsigned failures)
{
	int ms = AUTH_DELAY_MIN_MS;
	unsigned i;

	if (failures <= AUTH_FREE_FAILURES)
		return 0;
	for (i = AUTH_FREE_FAILURES + 1; i < failures && ms < AUTH_DELAY_MAX_MS; i++)
		ms *= 2;
	return ms > AUTH_DELAY_MAX_MS ? AUTH_DELAY_MAX_MS : ms;
}

/* The address's entry (the least recently failing one is recycled). */
static struct auth_addr *
auth_addr_get(const char *addr, int create)
{
	struct auth_addr *old = &auth_addrs[0];
	int i;

	for (i = 0; i < AUTH_MAX_ADDRS; i++) {
		if (auth_addrs[i].addr[0] != '\0' &&
		    strcmp(auth_addrs[i].addr, addr) == 0)
			return &auth_addrs[i];
		if (auth_addrs[i].last_ms < old->last_ms)
			old = &auth_addrs[i];
	}
	if (!create)
		return NULL;
	memset(old, 0, sizeof(*old));
	snprintf(old->addr, sizeof(old->addr), "%s", addr);
	return old;
}

static int
auth_acct_dirty(const struct auth_acct *t)
{
	return t->pending != 0 || t->reset || t->locked_at != 0;
}

/* Writes the batched failures of every account in one transaction. */
static void
auth_flush(void)
{
	static struct passdb_failures f[AUTH_MAX_ACCTS];
	size_t n = 0;
	int i, rc;

	auth_flushed_ms = master_now_ms();
	for (i = 0; i < AUTH_MAX_ACCTS; i++) {
		struct auth_acct *t = &auth_accts[i];

		if (!auth_acct_dirty(t))
			continue;
		memcpy(f[n].name, t->name, sizeof(f[n].name));
		f[n].count = t->pending;
		f[n].reset = t->reset;
		f[n].locked_at = t->locked_at;
		n++;
		t->pending = 0;
		t->reset = 0;
		t->locked_at = 0;
	}
	if (n == 0 || master.passdb == NULL)
		return;
	rc = passdb_note_failures(master.passdb, f, n);
	if (rc != 0) {
		errno = -rc;
		log_warn("passdb: cannot record the failed logons of %zu users", n);
	}
}

/*
 * The entry of an account name (lower-cased, cut at PASSDB_NAME_MAX); the
 * least recently failing one is recycled, after a flush if it has
 * something to write.
 */
static struct auth_acct *
auth_acct_get(const char *name, int create)
{
	struct auth_acct *old = &auth_accts[0];
	char key[PASSDB_NAME_MAX];
	size_t i;

	for (i = 0; i + 1 < sizeof(key) && name[i] != '\0'; i++)
		key[i] = (char)tolower((unsigned char)name[i]);
	key[i] = '\0';
	for (i = 0; i < AUTH_MAX_ACCTS; i++) {
		if (auth_accts[i].name[0] != '\0' &&
		    strcmp(auth_accts[i].name, key) == 0)
			return &auth_accts[i];
		if (auth_accts[i].last_ms < old->last_ms)
			old = &auth_accts[i];
	}
	if (!create)
		return NULL;
	if (auth_acct_dirty(old))
		auth_flush();
	memset(old, 0, sizeof(*old));
	memcpy(old->name, key, sizeof(key));
	return old;
}

/* Counts one attempt in a window; returns its failures. */
static unsigned
auth_window(unsigned *failures, int64_t *last_ms, int failed, int64_t now)
{
	if (now - *last_ms > AUTH_WINDOW_MS)
		*failures = 0;
	if (failed) {
		(*failures)++;
		*last_ms = now;
	}
	return *failures;
}

/*
 * Books this attempt against its address and its account name and
 * returns how long its reply waits: the longer of the two delays.
 */
static int
auth_throttle(const char *addr, const char *name, int failed)
{
	int64_t now = master_now_ms();
	struct auth_addr *a = auth_addr_get(addr, failed);
	struct auth_acct *t = name[0] != '\0' ? auth_acct_get(name, failed) : NULL;
	int da = 0, dt = 0;

	if (a != NULL)
		da = auth_throttle_delay_ms(auth_window(&a->failures,
		    &a->last_ms, failed, now));
	if (t != NULL)
		dt = auth_throttle_delay_ms(auth_window(&t->failures,
		    &t->last_ms, failed, now));
	return da > dt ? da : dt;
}

static int
auth_guest(struct authmsg_rep *rep, uint32_t flag)
{
	const char *guest = master.conf->guest_account;
	struct passwd *pw = getpwnam(guest);

	if (pw == NULL) {
		log_warnx("guest account %s does not exist", guest);
		return -1;
	}
	rep->flags |= flag;
	rep->uid = pw->pw_uid;
	rep->gid = pw->pw_gid;
	if (flag == AUTH_FLAG_GUEST)
		snprintf(rep->user, sizeof(rep->user), "%s", pw->pw_name);
	return 0;
}

/* A good logon: the failures in a row end (the count and any lockout). */
static void
auth_passdb_good(struct passdb_entry *e)
{
	struct auth_acct *t = auth_acct_get(e->name, 0);
	int rc;

	if (t != NULL) {
		t->pending = 0;
		t->reset = 0;
		t->locked_at = 0;
	}
	e->last_logon = time(NULL);
	e->failed_logons = 0;
	e->locked_at = 0;
	rc = passdb_put(master.passdb, e);
	if (rc != 0) {
		errno = -rc;
		log_warn("passdb: cannot record the logon of %s", e->name);
	}
}

/*
 * Is passdb user e locked out under policy p?  Looks at what the passdb
 * says and what is not written yet; an expired lockout is cleared (in the
 * next batch) and its count starts again.  *bad: the failures in a row.
 */
static int
auth_locked_out(const struct passdb_entry *e, const struct passdb_policy *p,
    struct auth_acct *t, uint32_t *bad)
{
	time_t now = time(NULL), at;

	*bad = (t != NULL && t->reset) ? 0 : e->failed_logons;
	if (t != NULL)
		*bad += t->pending;
	at = t != NULL && t->locked_at != 0 ? t->locked_at :
	    (t != NULL && t->reset) ? 0 : e->locked_at;
	if (p->bad_lockout_attempts == 0 || at == 0)
		return 0;
	if (p->lockout_duration == 0 ||
	    now < at + (time_t)p->lockout_duration * 60)
		return 1;
	if (t == NULL)
		t = auth_acct_get(e->name, 1);
	t->reset = 1;
	t->pending = 0;
	t->locked_at = 0;
	*bad = 0;
	return 0;
}

/* A wrong password for passdb user e: counted, and maybe a lockout. */
static void
auth_passdb_bad(const struct passdb_entry *e, const struct passdb_policy *p,
    uint32_t bad, const char *client)
{
	struct auth_acct *t = auth_acct_get(e->name, 1);

	if (t->pending < UINT32_MAX)
		t->pending++;
	if (p->bad_lockout_attempts != 0 && bad + 1 >= p->bad_lockout_attempts) {
		t->locked_at = time(NULL);
		log_warnx("user %s locked out after %u failed logons (the last "
		    "from %s)", e->name, bad + 1, client);
	}
}

/*
 * An unknown name costs what a known one does: the same NTLMv2 check,
 * against a random hash no password has (as far as anyone can know).
 */
static void
auth_decoy_verify(const struct authmsg_req *req, const struct ntlmssp_auth *a)
{
	uint8_t key[16];

	if (!auth_have_decoy) {
		if (getrandom(auth_decoy_hash, sizeof(auth_decoy_hash), 0) !=
		    (ssize_t)sizeof(auth_decoy_hash))
			memset(auth_decoy_hash, 0x5a, sizeof(auth_decoy_hash));
		auth_have_decoy = 1;
	}
	(void)ntlmssp_server_verify(auth_decoy_hash, a, req->negotiate,
	    req->negotiate_len, req->challenge, req->challenge_len,
	    req->authenticate, req->authenticate_len, key);
	explicit_bzero(key, sizeof(key));
}

/* Copies a UTF-8 name, cut (if it must be) at a character boundary. */
static void
auth_copy_name(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);

	if (src[n] != '\0')
		while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/*
 * Fills rep with the verdict for one AUTHENTICATE; never fails the child.
 * name: the account name it gave (empty for anonymous), for the throttle.
 */
static void
auth_verdict(const struct authmsg_req *req, struct authmsg_rep *rep,
    char name[PASSDB_NAME_MAX])
{
	struct passdb_policy pol;
	struct ntlmssp_auth a;
	struct passdb_entry e;
	struct passwd *pw;
	const char *why = NULL;
	uint32_t bad;
	uint64_t ch;
	int rc;

	name[0] = '\0';
	memset(rep, 0, sizeof(*rep));
	rep->status = STATUS_LOGON_FAILURE;
	if (ntlmssp_decode_authenticate(req->authenticate, req->authenticate_len,
	    &a) != 0 || auth_server_challenge(req, &ch) != 0) {
		log_warnx("logon from %s: malformed AUTHENTICATE", req->client);
		return;
	}
	auth_copy_name(rep->domain, sizeof(rep->domain), a.domain);
	auth_copy_name(name, PASSDB_NAME_MAX, a.user);
	if (master.conf->ntlm_disabled) {
		/* A Kerberos-only site: no NTLMSSP logon of any kind. */
		rep->status = STATUS_NTLM_BLOCKED;
		why = "NTLM refused (`ntlm auth = no`)";
		goto fail;
	}
	if (a.user[0] == '\0' && a.nt_len == 0) {
		if (auth_challenge_replayed(ch)) {
			log_warnx("logon from %s: anonymous exchange replayed "
			    "(challenge answered before)", req->client);
			return;
		}
		/*
		 * Samba's `restrict anonymous` 2 (our default): no null
		 * session at all, as Windows with RestrictAnonymous=2.
		 */
		if (master.conf->restrict_anonymous >= 2) {
			log_info("logon from %s: anonymous refused "
			    "(`restrict anonymous` = 2)", req->client);
			rep->status = STATUS_ACCESS_DENIED;
			return;
		}
		if (auth_guest(rep, AUTH_FLAG_ANONYMOUS) == 0) {
			/*
			 * The exchange's key (zero, or the client's with
			 * KEY_EXCH): a client that asks may sign and seal
			 * an anonymous session with it (as Samba).
			 */
			(void)ntlmssp_anonymous_key(&a, rep->session_key);
			rep->status = STATUS_SUCCESS;
			log_debug(2, "anonymous logon from %s", req->client);
		}
		return;
	}
	if (master.passdb == NULL) {
		why = "passdb unavailable";
		goto fail;
	}
	rc = passdb_get(master.passdb, a.user, &e);
	if (rc == -ENOENT) {
		if (master.conf->map_to_guest == MAP_GUEST_BAD_USER &&
		    auth_guest(rep, AUTH_FLAG_GUEST) == 0) {
			rep->status = STATUS_SUCCESS;
			log_info("logon from %s: unknown user %s mapped to guest",
			    req->client, a.user);
			return;
		}
		auth_decoy_verify(req, &a);
		why = "unknown user";
		goto fail;
	}
	if (rc != 0) {
		why = "passdb lookup failed";
		goto fail;
	}
	if (e.flags & PASSDB_FLAG_DISABLED) {
		rep->status = STATUS_ACCOUNT_DISABLED;
		why = "account disabled";
		goto fail;
	}
	if (passdb_policy_get(master.passdb, &pol) != 0)
		memset(&pol, 0, sizeof(pol));
	if (auth_locked_out(&e, &pol, auth_acct_get(e.name, 0), &bad)) {
		rep->status = STATUS_ACCOUNT_LOCKED_OUT;
		why = "account locked out";
		goto fail;
	}
	rep->status = ntlmssp_server_verify(e.nt_hash, &a, req->negotiate,
	    req->negotiate_len, req->challenge, req->challenge_len,
	    req->authenticate, req->authenticate_len, rep->session_key);
	if (rep->status != STATUS_SUCCESS) {
		rep->status = STATUS_LOGON_FAILURE;
		auth_passdb_bad(&e, &pol, bad, req->client);
		why = "wrong password";
		goto fail;
	}
	if (auth_challenge_replayed(ch)) {
		rep->status = STATUS_LOGON_FAILURE;
		why = "exchange replayed (its challenge was answered before)";
		goto fail;
	}
	/* The Unix identity is looked up now: accounts may have changed. */
	pw = getpwnam(e.unix_name);
	if (pw == NULL || pw->pw_uid == 0) {
		rep->status = STATUS_LOGON_FAILURE;
		why = pw == NULL ? "no such Unix account" : "Unix account is root";
		goto fail;
	}
	if (pw->pw_uid != e.uid)
		log_warnx("user %s: Unix uid is now %u (passdb says %u)", e.name,
		    (unsigned)pw->pw_uid, (unsigned)e.uid);
	rep->uid = pw->pw_uid;
	rep->gid = pw->pw_gid;
	snprintf(rep->user, sizeof(rep->user), "%s", pw->pw_name);
	auth_passdb_good(&e);
	master.auth_successes++;
	log_info("logon of %s (%s) from %s", a.user, rep->user, req->client);
	return;
fail:
	memset(rep->session_key, 0, sizeof(rep->session_key));
	rep->uid = rep->gid = 0;
	rep->flags = 0;
	rep->user[0] = '\0';
	master.auth_failures++;
	log_warnx("logon failure from %s: user \"%s\" domain \"%s\": %s",
	    req->client, a.user, a.domain, why);
}

static void
auth_reply(struct child *c, uint32_t id, const struct authmsg_rep *rep)
{
	uint8_t buf[1024];
	int len;

	len = authmsg_rep_encode(rep, buf, sizeof(buf));
	if (len < 0) {
		log_warnx("cannot encode an auth reply");
		return;
	}
	c->verdict = *rep;
	c->has_verdict = 1;
	/* What a hand-off naming this request id will be routed by. */
	route_verdict_record(c, id, rep, master_now_ms());
	(void)spawn_send(c, MSG_AUTH_REP, id, buf, (size_t)len);
}

/*
 * The SPNEGO mechListMIC (RFC 4178 5, MS-SPNG 3.2.5.1) of an NTLMSSP
 * exchange whose session key the worker that forwarded it will not get
 * (a re-authentication as another identity, auth_answer): the client's
 * MIC over the DER mechTypes is checked and ours made here, with
 * NTLMSSP's signing and sealing keys of the new exported session key
 * (MS-NLMP 3.4.4.2, sequence number 0 both ways), so the worker sends a
 * MIC it could not make.  A client MIC that does not verify fails the
 * logon (the worker's own check would have).  The mechTypes are the
 * worker's word: a compromised worker gets a MAC of its choice under
 * this one exchange's NTLMSSP key, whose only use is this exchange's
 * downgrade protection, which the worker carrying it could defeat
 * anyway; the SMB keys derive from the exported key, never from it.
 */
static void
auth_ntlm_mic(const struct authmsg_req *req, struct authmsg_rep *rep)
{
	struct ntlmssp_auth a;
	struct ntlmssp_keys nk;

	if (ntlmssp_decode_authenticate(req->authenticate, req->authenticate_len,
	    &a) != 0)
		return;
	ntlmssp_sign_keys(rep->session_key, a.flags, &nk);
	if (req->mic_len > 0 && ntlmssp_mac_verify(&nk, 0, 0, req->mech_types,
	    req->mech_types_len, req->mic, req->mic_len) != 0) {
		log_warnx("logon of %s from %s: bad SPNEGO mechListMIC", rep->user,
		    req->client);
		memset(rep, 0, sizeof(*rep));
		rep->status = STATUS_LOGON_FAILURE;
		master.auth_failures++;
	} else {
		ntlmssp_mac(&nk, 1, 0, req->mech_types, req->mech_types_len,
		    rep->mic);
		rep->mic_len = 16;
	}
	explicit_bzero(&nk, sizeof(nk));
}

void
auth_handle_req(struct child *c, const struct msg *m)
{
	char name[PASSDB_NAME_MAX];
	struct authmsg_req req;
	struct authmsg_rep rep;

	if (authmsg_req_decode(&req, m->payload, m->len) != 0) {
		spawn_kill(c, "malformed MSG_AUTH_REQ");
		return;
	}
	/* A new attempt voids the previous verdict until it is answered. */
	c->has_verdict = 0;
	if (req.mech == AUTHMSG_MECH_KRB5 || req.mech == AUTHMSG_MECH_KRB5_MIC) {
		/* Answered when the ticket helper has judged the ticket. */
		auth_krb_start(c, m->id, &req);
		return;
	}
	auth_verdict(&req, &rep, name);
	/* Only where the key is withheld (auth_answer): the gate makes its own. */
	if (rep.status == STATUS_SUCCESS && c->role == CHILD_WORKER &&
	    rep.uid != c->uid && req.mech_types_len > 0 &&
	    req.mech_types_len <= AUTH_MECH_TYPES_MAX &&
	    !(rep.flags & (AUTH_FLAG_ANONYMOUS | AUTH_FLAG_GUEST)))
		auth_ntlm_mic(&req, &rep);
	auth_answer(c, m->id, req.client, name, &rep);
	explicit_bzero(&rep, sizeof(rep));
}

void
auth_answer(struct child *c, uint32_t id, const char *client,
    const char *name, struct authmsg_rep *rep)
{
	int delay, i;

	/*
	 * A worker is pinned to one uid: another uid's session key is not
	 * its business, whoever's exchange it forwarded.  The verdict goes
	 * without it; the worker refuses such a session (or keeps the one it
	 * re-authenticates) and says so, as it did with the key.
	 */
	if (c->role == CHILD_WORKER && rep->status == STATUS_SUCCESS &&
	    rep->uid != c->uid) {
		log_warnx("logon of %s from %s: session key of uid %u withheld "
		    "from worker %d of uid %u", rep->user[0] ? rep->user :
		    "(anonymous)", client, (unsigned)rep->uid, (int)c->pid,
		    (unsigned)c->uid);
		/*
		 * A real user's or an anonymous session may be relayed to
		 * a worker of that uid (MSG_RELAY): the master keeps the
		 * whole verdict, key included, for that one request of this
		 * worker.  Not a guest's: it has no key to be relayed with.
		 */
		if (!(rep->flags & AUTH_FLAG_GUEST) && rep->uid != 0) {
			route_relay_record(c, id, rep, master_now_ms());
			rep->flags |= AUTH_FLAG_RELAY;
		}
		explicit_bzero(rep->session_key, sizeof(rep->session_key));
		explicit_bzero(rep->full_key, sizeof(rep->full_key));
		rep->full_key_len = 0;
	}
	delay = auth_throttle(client, name, rep->status != STATUS_SUCCESS);
	if (delay == 0) {
		auth_reply(c, id, rep);
		return;
	}
	for (i = 0; i < AUTH_MAX_DELAYED; i++) {
		struct auth_delayed *d = &auth_queue[i];

		if (d->in_use)
			continue;
		d->in_use = 1;
		d->due_ms = master_now_ms() + delay;
		d->pid = c->pid;
		d->id = id;
		d->rep = *rep;
		log_debug(2, "reply to %s delayed %d ms", client, delay);
		return;
	}
	/* Flooded: refuse rather than answer without the delay. */
	log_warnx("auth delay queue full: refusing a logon from %s", client);
	memset(rep, 0, sizeof(*rep));
	rep->status = STATUS_REQUEST_NOT_ACCEPTED;
	auth_reply(c, id, rep);
}

void
auth_tick(void)
{
	int64_t now = master_now_ms();
	struct child *c;
	int i;

	if (now - auth_flushed_ms >= AUTH_FLUSH_MS)
		auth_flush();
	auth_krb_tick();
	for (i = 0; i < AUTH_MAX_DELAYED; i++) {
		struct auth_delayed *d = &auth_queue[i];

		if (!d->in_use || d->due_ms > now)
			continue;
		d->in_use = 0;
		c = spawn_find(d->pid);
		if (c != NULL && c->chan >= 0 && !c->dying)
			auth_reply(c, d->id, &d->rep);
	}
}

int
auth_timeout_ms(void)
{
	int64_t now = master_now_ms(), best = -1;
	int i;

	for (i = 0; i < AUTH_MAX_DELAYED; i++) {
		const struct auth_delayed *d = &auth_queue[i];

		if (d->in_use && (best < 0 || d->due_ms < best))
			best = d->due_ms;
	}
	if (best < 0)
		return auth_krb_waiting() ? 1000 : -1;
	return best <= now ? 0 : (int)(best - now);
}
