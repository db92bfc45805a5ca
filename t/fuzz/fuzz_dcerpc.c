/*
 * libFuzzer target: DCE/RPC over a named pipe and the NDR of srvsvc,
 * wkssvc and lsarpc.  The first byte picks what the rest is:
 *   0  a byte stream written to a fresh srvsvc pipe (bind first, or not),
 *      cut into writes at the sizes the second byte gives
 *   1  the same on a pipe already bound to srvsvc (so requests run)
 *   2  a srvsvc request stub for opnum data[1]; with bit 2 of the first
 *      byte set the caller is an administrator (no state env: the
 *      session and file lists come back empty after a full decode)
 *   3  a wkssvc request stub for opnum data[1], or with bit 2 of the
 *      first byte set an lsarpc one (its SIDs and names are looked up in
 *      NSS like any account's); with bit 3 set a samr one, whose first
 *      20 bytes, when they are "HNDL" and a kind (0 connect, 1 account
 *      domain, 2 Builtin, 3 Unix Group, 4 user root, 5 group root), are
 *      replaced by a real handle of that kind, so the calls behind the
 *      handle check are reached (the accounts: root and uid 4000000)
 * Every response message must be a whole PDU whose frag_length is its size
 * and no longer than the negotiated fragment size.
 *
 * Build: make build/fuzz/fuzz_dcerpc
 * Run:   build/fuzz/fuzz_dcerpc -max_total_time=60 t/fuzz/corpus/dcerpc
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/conf.h"
#include "proto/dcerpc.h"
#include "proto/ndr.h"
#include "worker/pipe.h"
#include "worker/samr_db.h"

/* names only (no @group): the fuzzer never asks NSS */
static char *fuzz_only[] = { "someone", NULL };

static struct conf_share fuzz_shares[] = {
	{ .name = "IPC$", .is_ipc = 1, .browseable = 1 },
	{ .name = "share", .path = "/srv/share", .comment = "c", .browseable = 1 },
	{ .name = "h$", .path = "/srv/h", .browseable = 0 },
	/* left out of the lists by access based share enum */
	{ .name = "abe", .path = "/srv/abe", .browseable = 1,
	  .valid_users = fuzz_only, .access_based_share_enum = 1,
	  .hide_unreadable = 1 },
};

static struct conf fuzz_conf = {
	.netbios_name = "FUZZ", .workgroup = "WG", .server_string = "fuzz",
	.shares = fuzz_shares, .nshares = 4,
};

/* smbclient's bind to srvsvc (frags 4280) */
static const uint8_t fuzz_bind[72] = {
	0x05, 0x00, 0x0b, 0x03, 0x10, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00, 0xb8, 0x10, 0xb8, 0x10, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0xc8, 0x4f, 0x32, 0x4b,
	0x70, 0x16, 0xd3, 0x01, 0x12, 0x78, 0x5a, 0x47, 0xbf, 0x6e, 0xe1, 0x88,
	0x03, 0x00, 0x00, 0x00, 0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11,
	0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60, 0x02, 0x00, 0x00, 0x00,
};

static uint8_t fuzz_out[PIPE_MAX_RSP_STUB];

static void
fuzz_drain(struct rpc_pipe *p)
{
	size_t n, off;
	int more;
	unsigned i;

	for (i = 0; i < 100000 && pipe_avail(p) > 0; i++) {
		off = 0;
		do {
			n = pipe_read(p, fuzz_out + off, 1000, &more);
			off += n;
		} while (more && n > 0);
		if (dcerpc_frag_length(fuzz_out, off) != off || off > PIPE_MAX_FRAG)
			abort();
	}
}

static void
fuzz_stream(const uint8_t *d, size_t n, int bind)
{
	struct rpc_pipe *p = pipe_open("srvsvc", &fuzz_conf, "fuzz");
	size_t step, k;

	if (p == NULL || n == 0)
		goto out;
	if (bind) {
		(void)pipe_write(p, fuzz_bind, sizeof(fuzz_bind));
		fuzz_drain(p);
	}
	step = (size_t)d[0] * 8 + 1;
	d++;
	n--;
	while (n > 0) {
		k = n < step ? n : step;
		if (pipe_write(p, d, k) < 0)
			break;
		fuzz_drain(p);
		d += k;
		n -= k;
	}
out:
	pipe_close(p);
}

static void
fuzz_stub(const struct pipe_iface *pi, int as_admin, const uint8_t *d, size_t n)
{
	const struct pipe_env user = { .conf = &fuzz_conf, .user = "fuzz" };
	const struct pipe_env admin = { .conf = &fuzz_conf, .user = "fuzz", .admin = 1 };
	struct ndr_w w;
	struct cur c;
	uint8_t *copy;

	if (n == 0)
		return;
	/* An exact-size copy, so reading past the end is caught. */
	copy = malloc(n - 1 ? n - 1 : 1);
	if (copy == NULL)
		return;
	memcpy(copy, d + 1, n - 1);
	cur_init(&c, copy, n - 1);
	ndr_w_init(&w, fuzz_out, 65536);
	(void)pi->call(as_admin ? &admin : &user, d[0], &c, &w);
	free(copy);
}

/* samr handles of fuzz_samr_env: [kind][20], made once */
static const struct pipe_env fuzz_samr_env = { .conf = &fuzz_conf, .user = "fuzz" };
static uint8_t fuzz_samr_h[6][20];

/* Runs samr opnum on stub[0, len) and keeps the handle at out + off. */
static void
fuzz_samr_open(uint16_t op, const uint8_t *stub, size_t len, size_t off,
    uint8_t *h)
{
	struct ndr_w w;
	struct cur c;

	cur_init(&c, stub, len);
	ndr_w_init(&w, fuzz_out, 65536);
	if (pipe_iface_samr.call(&fuzz_samr_env, op, &c, &w) == 0 &&
	    wcur_off(&w.w) >= off + 20)
		memcpy(h, fuzz_out + off, 20);
}

static void
fuzz_samr_init(void)
{
	static const uint8_t users[] = {
		2, 0, 0, 0,  0, 0, 0, 0,  0, 0, 0, 0,  4, 'r', 'o', 'o', 't',
		0, 0x09, 0x3d, 0,  1, 0, 0, 0,  5, 'g', 'h', 'o', 's', 't',
	};
	static int done;
	uint8_t stub[64];
	struct ndr_w w;
	int d;

	if (done)
		return;
	done = 1;
	(void)samr_db_set(users, sizeof(users));
	ndr_w_init(&w, stub, sizeof(stub));
	ndr_put_ptr(&w, 0);
	ndr_put_u32(&w, 0x02000000);		/* MAXIMUM_ALLOWED */
	fuzz_samr_open(57, stub, wcur_off(&w.w), 0, fuzz_samr_h[0]);
	for (d = 1; d <= 3; d++) {		/* S-1-22-1, S-1-5-32, S-1-22-2 */
		ndr_w_init(&w, stub, sizeof(stub));
		wcur_bytes(&w.w, fuzz_samr_h[0], 20);
		ndr_put_u32(&w, 0x02000000);
		ndr_put_u32(&w, 1);
		wcur_u8(&w.w, 1);
		wcur_u8(&w.w, 1);
		wcur_zero(&w.w, 5);
		wcur_u8(&w.w, d == 2 ? 5 : 22);
		ndr_put_u32(&w, d == 1 ? 1 : d == 2 ? 32 : 2);
		fuzz_samr_open(7, stub, wcur_off(&w.w), 0, fuzz_samr_h[d]);
	}
	for (d = 4; d <= 5; d++) {		/* OpenUser 0, OpenGroup 0 */
		ndr_w_init(&w, stub, sizeof(stub));
		wcur_bytes(&w.w, fuzz_samr_h[d == 4 ? 1 : 3], 20);
		ndr_put_u32(&w, 0x02000000);
		ndr_put_u32(&w, 0);
		fuzz_samr_open(d == 4 ? 34 : 19, stub, wcur_off(&w.w), 0,
		    fuzz_samr_h[d]);
	}
}

static void
fuzz_samr(const uint8_t *d, size_t n)
{
	struct ndr_w w;
	struct cur c;
	uint8_t *copy;

	if (n == 0)
		return;
	fuzz_samr_init();
	copy = malloc(n - 1 ? n - 1 : 1);
	if (copy == NULL)
		return;
	memcpy(copy, d + 1, n - 1);
	if (n - 1 >= 20 && memcmp(copy, "HNDL", 4) == 0 && copy[4] < 6)
		memcpy(copy, fuzz_samr_h[copy[4]], 20);
	cur_init(&c, copy, n - 1);
	ndr_w_init(&w, fuzz_out, 65536);
	(void)pipe_iface_samr.call(&fuzz_samr_env, d[0], &c, &w);
	free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dcerpc_hdr h;
	struct dcerpc_bind b;
	struct dcerpc_request r;

	if (size < 1)
		return 0;
	if (size > 1 && dcerpc_hdr_decode(data + 1, size - 1, &h) == DCERPC_OK) {
		(void)dcerpc_bind_decode(data + 1, size - 1, &h, &b);
		(void)dcerpc_request_decode(data + 1, size - 1, &h, &r);
	}
	switch (data[0] & 3) {
	case 0:
		fuzz_stream(data + 1, size - 1, 0);
		break;
	case 1:
		fuzz_stream(data + 1, size - 1, 1);
		break;
	case 2:
		fuzz_stub(&pipe_iface_srvsvc, data[0] & 4, data + 1, size - 1);
		break;
	case 3:
		if (data[0] & 8)
			fuzz_samr(data + 1, size - 1);
		else
			fuzz_stub(data[0] & 4 ? &pipe_iface_lsarpc :
			    &pipe_iface_wkssvc, 0, data + 1, size - 1);
		break;
	}
	return 0;
}
