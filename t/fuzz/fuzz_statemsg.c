/*
 * libFuzzer target: the decoders of the messages between the master and
 * the state process (daemon/statemsg.h).  The state process maps memory
 * every worker can write, so the master takes its messages as a
 * compromised child's; and the state process decodes what the master
 * sends it.  Every decoder must take any bytes.
 *
 * The first input byte picks the decoder, the rest is its input:
 *
 *	0  statemsg_info_decode()    MSG_INFO_REP of the state process (master)
 *	1  statemsg_counts_decode()  MSG_STATE_COUNTS (master)
 *	2  statemsg_writer_decode()  MSG_STATE_WRITER (master)
 *	3  statemsg_purge_decode()   MSG_STATE_PURGE (state process)
 *
 * Invariants beyond "no crash": every decoded string is NUL-terminated
 * inside its field and has no control byte the encoder could not have
 * written (none: any byte but NUL passes, the master escapes on display);
 * a decoder that accepts gives back, encoded again, exactly its input
 * (the fixed messages) or a record-by-record equal answer (the status).
 *
 * Seeds: t/fuzz/corpus/statemsg (a valid encoding of each, made with the
 * encoders; FUZZ_STATEMSG_SEEDS=DIR writes them).
 * Run:
 *   make build/fuzz/fuzz_statemsg
 *   build/fuzz/fuzz_statemsg -max_total_time=60 t/fuzz/corpus/statemsg
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/msg.h"
#include "daemon/statemsg.h"

static uint8_t	out[MSG_MAX_PAYLOAD];

struct again {
	struct statemsg_info_enc enc;
	int	n;
};

static void
str_ok(const char *s, size_t cap)
{
	if (memchr(s, '\0', cap) == NULL)
		abort();
}

static int
on_sess(const struct statemsg_sess *s, void *arg)
{
	struct again *a = arg;

	str_ok(s->user, sizeof(s->user));
	str_ok(s->addr, sizeof(s->addr));
	a->n++;
	return statemsg_info_sess(&a->enc, s) == 0 ? 0 : -1;
}

static int
on_open(const struct statemsg_open *o, void *arg)
{
	struct again *a = arg;

	str_ok(o->share, sizeof(o->share));
	str_ok(o->path, sizeof(o->path));
	a->n++;
	return statemsg_info_open(&a->enc, o) == 0 ? 0 : -1;
}

static int
on_lock(const struct statemsg_lock *l, void *arg)
{
	struct again *a = arg;

	a->n++;
	return statemsg_info_lock(&a->enc, l) == 0 ? 0 : -1;
}

static int
on_durable(const struct statemsg_durable *d, void *arg)
{
	struct again *a = arg;

	a->n++;
	return statemsg_info_durable(&a->enc, d) == 0 ? 0 : -1;
}

static void
fuzz_info(const uint8_t *p, size_t len)
{
	static struct again a;
	struct statemsg_info_cb cb = { on_sess, on_open, on_lock, &a,
	    on_durable };
	int truncated = 0;
	size_t n;

	memset(&a, 0, sizeof(a));
	statemsg_info_begin(&a.enc, out, sizeof(out));
	if (statemsg_info_decode(p, len, &cb, &truncated) != 0)
		return;
	if (truncated)
		a.enc.truncated = 1;
	n = statemsg_info_end(&a.enc);
	/* What was accepted is what the encoder writes for it. */
	if (n != len || memcmp(out, p, len) != 0)
		abort();
}

static void
fuzz_fixed(uint8_t sel, const uint8_t *p, size_t len)
{
	static struct statemsg_purge pu;
	struct statemsg_counts c;
	struct statemsg_writer w;
	int n = -1;

	switch (sel) {
	case 1:
		if (statemsg_counts_decode(&c, p, len) != 0)
			return;
		n = statemsg_counts_encode(&c, out, sizeof(out));
		break;
	case 2:
		if (statemsg_writer_decode(&w, p, len) != 0)
			return;
		n = statemsg_writer_encode(&w, out, sizeof(out));
		break;
	case 3:
		if (statemsg_purge_decode(&pu, p, len) != 0)
			return;
		if (pu.nlive > STATEMSG_LIVE_MAX)
			abort();
		n = statemsg_purge_encode(&pu, out, sizeof(out));
		break;
	default:
		return;
	}
	if (n < 0 || (size_t)n != len || memcmp(out, p, len) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] % 4 == 0)
		fuzz_info(data + 1, size - 1);
	else
		fuzz_fixed(data[0] % 4, data + 1, size - 1);
	return 0;
}

/* FUZZ_STATEMSG_SEEDS=DIR: write one valid input per decoder, then go on. */
static void
seed_write(const char *dir, const char *name, uint8_t sel, const uint8_t *p,
    size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		return;
	fputc(sel, f);
	fwrite(p, 1, len, f);
	fclose(f);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static struct statemsg_purge pu;
	struct statemsg_info_enc e;
	struct statemsg_sess s = { .id = 0x1234, .pid = 77, .uid = 1001,
	    .user = "alice", .addr = "127.0.0.1", .dialect = 0x311,
	    .signing = 1, .since = 1700000000 };
	struct statemsg_open o = { .dev = 2049, .ino = 12, .pers = 9, .pid = 77,
	    .sid = 0x1234, .access = 0x12019f, .share_access = 7, .oplock = 0xff,
	    .lease_state = 3, .flags = 3, .since = 1700000001, .share = "share",
	    .path = "dir/file.txt" };
	struct statemsg_lock l = { .dev = 2049, .ino = 12, .pid = 77, .pers = 9,
	    .offset = 0, .length = 10, .exclusive = 1 };
	struct statemsg_durable d = { .pers = 9, .flags = 4,
	    .timeout_ms = 120000 };
	struct statemsg_counts c = { 1, 2, 3, 64 << 20 };
	struct statemsg_writer w = { 77, 1500 };
	const char *dir = getenv("FUZZ_STATEMSG_SEEDS");
	uint8_t b[64];
	int n;

	(void)argc;
	(void)argv;
	if (dir == NULL)
		return 0;
	statemsg_info_begin(&e, out, sizeof(out));
	(void)statemsg_info_sess(&e, &s);
	(void)statemsg_info_open(&e, &o);
	(void)statemsg_info_lock(&e, &l);
	(void)statemsg_info_durable(&e, &d);
	seed_write(dir, "info", 0, out, statemsg_info_end(&e));
	if ((n = statemsg_counts_encode(&c, b, sizeof(b))) > 0)
		seed_write(dir, "counts", 1, b, (size_t)n);
	if ((n = statemsg_writer_encode(&w, b, sizeof(b))) > 0)
		seed_write(dir, "writer", 2, b, (size_t)n);
	pu.pid = 77;
	pu.nlive = 2;
	pu.live[0] = 78;
	pu.live[1] = 79;
	if ((n = statemsg_purge_encode(&pu, out, sizeof(out))) > 0)
		seed_write(dir, "purge", 3, out, (size_t)n);
	return 0;
}
