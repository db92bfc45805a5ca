/*
 * A session outliving its home connection (worker/conn.c,
 * conn_keep_headless; MS-SMB2 3.3.7.1): two real connections of a worker
 * (socketpairs), a session on the first with a channel slot on the second.
 * When the home is lost it is kept headless only while a channel is
 * alive; it keeps the session and its parked CREATEs waiting for a break,
 * ends the rest (other sessions, other parked requests), discards output,
 * sends break notices on the channel, and is done when the last channel
 * goes or the session ends.  Run under ASan: the lifetimes are the point.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "worker/conn_priv.h"

struct pair {
	struct conn	*home, *chan;
	struct session	*s, *ch;
	int		 peer[2];	/* the client ends */
};

static struct conn *
mkconn(int *peer, const char *name)
{
	int sv[2];
	struct conn *c;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sv), 0);
	c = conn_new(NULL, sv[0], CONN_ROLE_WORKER, name, CONN_BUF_SMALL);
	ck_assert_ptr_nonnull(c);
	c->dialect = 0x0311;
	*peer = sv[1];
	return c;
}

/* A valid session on home with one channel slot on chan. */
static void
mkpair(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	p->home = mkconn(&p->peer[0], "home");
	p->chan = mkconn(&p->peer[1], "chan");
	p->s = conn_session_new(p->home);
	ck_assert_ptr_nonnull(p->s);
	p->s->state = SESS_VALID;
	p->ch = conn_session_new(p->chan);
	ck_assert_ptr_nonnull(p->ch);
	p->ch->session_id = p->s->session_id;
	p->ch->state = SESS_VALID;
	p->ch->bound_conn = p->home;
	ck_assert_int_eq(conn_channel_link(p->s, p->chan, p->ch), 0);
}

static void
unpair(struct pair *p)
{
	if (p->chan != NULL)
		conn_free(p->chan);
	if (p->home != NULL)
		conn_free(p->home);
	close(p->peer[0]);
	close(p->peer[1]);
}

/* A parked request with a slot buffer, as dispatch_park leaves it. */
static struct conn_pending *
park(struct conn *c, uint64_t mid, uint64_t sid, int kind, uint16_t cmd)
{
	struct conn_pending *p = conn_pending_add(c, mid, sid, CONN_PARK_BUF);

	ck_assert_ptr_nonnull(p);
	if (p->buf == NULL) {
		p->buf = calloc(1, CONN_PARK_BUF);
		p->cap = CONN_PARK_BUF;
	}
	ck_assert_ptr_nonnull(p->buf);
	p->kind = kind;
	p->command = cmd;
	return p;
}

START_TEST(test_kept_while_channel_lives)
{
	static const uint8_t notice[64] = { 0xfe, 'S', 'M', 'B' };
	struct pair p;
	struct session *o;
	uint64_t sid, oid;

	mkpair(&p);
	sid = p.s->session_id;
	/* Another session on the home, with no channel: it ends. */
	o = conn_session_new(p.home);
	ck_assert_ptr_nonnull(o);
	o->state = SESS_VALID;
	oid = o->session_id;
	park(p.home, 5, sid, PARK_BREAK, SMB2_CREATE);
	park(p.home, 6, sid, PARK_LOCK, SMB2_LOCK);
	park(p.home, 7, oid, PARK_BREAK, SMB2_CREATE);
	ck_assert_int_eq(conn_notice_queue(p.home, notice, sizeof(notice),
	    sid), 0);

	ck_assert_int_eq(conn_keep_headless(p.home), 1);
	ck_assert_int_eq(p.home->priv->headless, 1);
	/* Kept: the session, its channel and its CREATE waiting on a break. */
	ck_assert_ptr_eq(conn_session_find(p.home, sid), p.s);
	ck_assert_uint_eq(p.s->nchan, 1);
	ck_assert_ptr_eq(p.ch->bound, p.s);
	ck_assert_ptr_nonnull(conn_pending_find(p.home, 0, 5));
	/* Ended: its other parked request, the other session and its own. */
	ck_assert_ptr_null(conn_pending_find(p.home, 0, 6));
	ck_assert_ptr_null(conn_pending_find(p.home, 0, 7));
	ck_assert_ptr_null(conn_session_find(p.home, oid));
	/* The notice moved to the channel; new ones go there too. */
	ck_assert_uint_eq(p.home->priv->nnotices, 0);
	ck_assert_uint_eq(p.chan->priv->nnotices, 1);
	ck_assert_uint_eq(p.chan->priv->notices[0].session_id, sid);
	ck_assert_int_eq(conn_notice_queue(p.home, notice, sizeof(notice),
	    sid), 0);
	ck_assert_uint_eq(p.chan->priv->nnotices, 2);
	/* Output of a request resumed here goes nowhere, without error. */
	p.home->priv->out_p = notice;
	p.home->priv->out_len = sizeof(notice);
	ck_assert_int_eq(conn_flush(p.home), 0);
	ck_assert_int_eq(conn_output_pending(p.home), 0);
	/* A second loss is not a second keep. */
	ck_assert_int_eq(conn_keep_headless(p.home), 0);
	ck_assert_int_eq(conn_headless_done(p.home), 0);

	/* The last channel goes: the home is done, freed as usual. */
	conn_free(p.chan);
	p.chan = NULL;
	ck_assert_uint_eq(p.s->nchan, 0);
	ck_assert_int_eq(conn_headless_done(p.home), 1);
	unpair(&p);
}
END_TEST

START_TEST(test_not_kept_without_channel)
{
	struct pair p;

	mkpair(&p);
	/* The channel is the one lost: nothing of the session lives there. */
	ck_assert_int_eq(conn_keep_headless(p.chan), 0);
	ck_assert_int_eq(p.chan->priv->headless, 0);
	conn_free(p.chan);
	p.chan = NULL;
	/* Now the home has no channel: freed as usual. */
	ck_assert_int_eq(conn_keep_headless(p.home), 0);
	ck_assert_int_eq(p.home->priv->headless, 0);
	ck_assert_int_eq(conn_headless_done(p.home), 0);
	unpair(&p);
}
END_TEST

START_TEST(test_logoff_ends_headless)
{
	struct pair p;
	uint64_t sid;

	mkpair(&p);
	sid = p.s->session_id;
	park(p.home, 5, sid, PARK_BREAK, SMB2_CREATE);
	ck_assert_int_eq(conn_keep_headless(p.home), 1);
	/* LOGOFF on the channel ends the session on every channel. */
	conn_session_free(p.home, p.s);
	ck_assert_ptr_null(conn_session_find(p.home, sid));
	ck_assert_ptr_null(conn_session_find(p.chan, sid));
	ck_assert_ptr_null(conn_pending_find(p.home, 0, 5));
	ck_assert_int_eq(conn_headless_done(p.home), 1);
	unpair(&p);
}
END_TEST

START_TEST(test_killed_is_done)
{
	struct pair p;

	mkpair(&p);
	ck_assert_int_eq(conn_keep_headless(p.home), 1);
	ck_assert_int_eq(conn_headless_done(p.home), 0);
	p.home->priv->dead = 1;	/* kill-client */
	ck_assert_int_eq(conn_headless_done(p.home), 1);
	unpair(&p);
}
END_TEST

/*
 * The parked-request table (worker/conn_pending.c): 64 base slots, then
 * pages of small slots up to CONN_MAX_PENDING a connection and
 * CONN_PARK_WORKER_PAGES a worker; a request that may keep a chain
 * (CONN_PARK_BUF) only in a base slot.
 */
static unsigned
fill_small(struct conn *c, uint64_t mid0)
{
	unsigned n = 0;
	struct conn_pending *p;

	while ((p = conn_pending_add(c, mid0 + n, 1, 96)) != NULL) {
		ck_assert(p->buf == NULL || p->cap >= 96);
		n++;
	}
	return n;
}

START_TEST(test_park_bound)
{
	struct conn *c[11];
	struct conn_pending *p;
	int peer[11];
	unsigned i;

	c[0] = mkconn(&peer[0], "bound0");
	for (i = 0; i < CONN_PARK_BASE; i++)
		park(c[0], i + 1, 1, PARK_BREAK, SMB2_CREATE);
	/* no page slot holds a CREATE: refused, and no page made for it */
	ck_assert_ptr_null(conn_pending_add(c[0], 100, 1, CONN_PARK_BUF));
	ck_assert_uint_eq(c[0]->priv->npark_pages, 0);
	ck_assert_uint_eq(fill_small(c[0], 1000),
	    CONN_MAX_PENDING - CONN_PARK_BASE);
	ck_assert_uint_eq(c[0]->priv->npark_pages, CONN_PARK_PAGES);
	/* the last one parked is found in its page; freed, it comes back */
	p = conn_pending_find(c[0], 0, 1000 + CONN_MAX_PENDING -
	    CONN_PARK_BASE - 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->cap, CONN_PARK_SMALL);
	conn_pending_del(p);
	ck_assert_ptr_eq(conn_pending_add(c[0], 5000, 1, 96), p);
	ck_assert_ptr_null(conn_pending_add(c[0], 5001, 1, 96));
	/* eight more connections take 56 pages; the tenth gets the last */
	for (i = 1; i < 11; i++)
		c[i] = mkconn(&peer[i], "boundn");
	for (i = 1; i < 9; i++)
		ck_assert_uint_eq(fill_small(c[i], 1), CONN_MAX_PENDING);
	ck_assert_uint_eq(fill_small(c[9], 1), CONN_PARK_BASE +
	    CONN_PARK_PAGE);
	ck_assert_uint_eq(fill_small(c[10], 1), CONN_PARK_BASE);
	/* a connection's end gives its pages back to the worker */
	conn_free(c[1]);
	close(peer[1]);
	ck_assert_uint_eq(fill_small(c[10], 1000), CONN_MAX_PENDING -
	    CONN_PARK_BASE);
	conn_free(c[0]);
	close(peer[0]);
	for (i = 2; i < 11; i++) {
		conn_free(c[i]);
		close(peer[i]);
	}
}
END_TEST

static Suite *
conn_suite(void)
{
	Suite *s = suite_create("conn");
	TCase *tc = tcase_create("headless");

	tcase_add_test(tc, test_kept_while_channel_lives);
	tcase_add_test(tc, test_not_kept_without_channel);
	tcase_add_test(tc, test_logoff_ends_headless);
	tcase_add_test(tc, test_killed_is_done);
	suite_add_tcase(s, tc);
	tc = tcase_create("park");
	tcase_add_test(tc, test_park_bound);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(conn_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
