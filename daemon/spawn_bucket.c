/*
 * The master's token buckets (daemon/spawn.h struct spawn_bucket): how
 * much of a kind of message a child may send, and the rate-limited line
 * about what was dropped.
 */
#include "daemon/spawn.h"

#include "daemon/log.h"

int
spawn_bucket_take(struct spawn_bucket *b, int rate, int burst, int64_t now_ms)
{
	int64_t cap = (int64_t)burst * 1000;

	if (b->last_ms == 0)
		b->milli = cap;
	else if (now_ms > b->last_ms) {
		/* rate tokens a second = rate milli-tokens a millisecond */
		b->milli += (now_ms - b->last_ms) * rate;
		if (b->milli > cap)
			b->milli = cap;
	}
	b->last_ms = now_ms;
	if (b->milli >= 1000) {
		b->milli -= 1000;
		return 1;
	}
	b->dropped++;
	return 0;
}

/*
 * One line a second at most about what a bucket dropped, naming the child;
 * the first drop is said at once.
 */
void
spawn_bucket_report(const struct child *c, struct spawn_bucket *b,
    const char *what, int rate, int64_t now_ms)
{
	if (b->dropped == b->reported ||
	    (b->reported_ms != 0 && now_ms - b->reported_ms < 1000))
		return;
	log_warnx("%s %d%s%s: %llu %s dropped (more than %d a second)",
	    spawn_role_name(c), (int)c->pid,
	    c->user[0] ? " " : "", c->user,
	    (unsigned long long)(b->dropped - b->reported), what, rate);
	b->reported = b->dropped;
	b->reported_ms = now_ms;
}
