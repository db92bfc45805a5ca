/*
 * DCE/RPC PDU codecs and the pipe endpoint: bind, alter_context, request
 * fragments, response fragmentation, faults, truncations.
 *
 * The fixtures are real PDUs: Samba 4.17's smbclient -L and rpcclient
 * against Samba's smbd on loopback, captured with tshark and cut out of
 * the FSCTL_PIPE_TRANSCEIVE buffers.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/conf.h"
#include "proto/dcerpc.h"
#include "proto/ndr.h"
#include "worker/pipe.h"
#include "testlib.h"

/* smbclient -L: bind to srvsvc 3.0 with NDR 2.0, call id 1, frags 4280 */
static const char fx_bind[] =
    "05000b03100000004800000001000000b810b810000000000100000000000100"
    "c84f324b7016d30112785a47bf6ee18803000000045d888aeb1cc9119fe80800"
    "2b10486002000000";
/* Samba's bind_ack to it */
static const char fx_bind_ack[] =
    "05000c03100000004400000001000000b810b810ea3700000d005c706970655c"
    "73727673766300000100000000000000045d888aeb1cc9119fe808002b104860"
    "02000000";
/* smbclient -L: NetShareEnumAll (opnum 15) level 1, call id 2 */
static const char fx_enum1[] =
    "05000003100000005c000000020000004400000000000f00000002000a000000"
    "000000000a0000003100320037002e0030002e0030002e003100000001000000"
    "01000000040002000000000000000000ffffffff0800020000000000";

static struct conf_share test_shares[] = {
	{ .name = "IPC$", .is_ipc = 1, .browseable = 1 },
	{ .name = "share", .path = "/srv/share", .comment = "the share",
	  .browseable = 1 },
};

static struct conf test_conf = {
	.netbios_name = "USMBTEST", .workgroup = "WORKGROUP",
	.server_string = "usmbd test", .shares = test_shares, .nshares = 2,
};

/* Reads every queued message into buf; returns the byte count. */
static size_t
drain(struct rpc_pipe *p, uint8_t *buf, size_t size, unsigned *nmsg)
{
	size_t n = 0, k;
	int more;
	unsigned i;

	*nmsg = 0;
	for (i = 0; i < 10000 && pipe_avail(p) > 0; i++) {
		k = pipe_read(p, buf + n, size - n, &more);
		ck_assert_uint_gt(k, 0);
		n += k;
		if (!more)
			(*nmsg)++;
	}
	return n;
}

static struct rpc_pipe *
bound_pipe(void)
{
	struct rpc_pipe *p = pipe_open("srvsvc", &test_conf, "alice");
	uint8_t out[256], *b;
	size_t len;
	unsigned nmsg;

	ck_assert_ptr_nonnull(p);
	b = test_hex(fx_bind, &len);
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	free(b);
	ck_assert_uint_eq(drain(p, out, sizeof(out), &nmsg), 68);
	ck_assert_uint_eq(out[2], DCERPC_PKT_BIND_ACK);
	return p;
}

START_TEST(test_bind_decode_fixture)
{
	struct dcerpc_hdr h;
	struct dcerpc_bind b;
	struct dcerpc_syntax ts;
	size_t len;
	uint8_t *pdu = test_hex(fx_bind, &len);

	ck_assert_int_eq(dcerpc_hdr_decode(pdu, len, &h), DCERPC_OK);
	ck_assert_uint_eq(h.ptype, DCERPC_PKT_BIND);
	ck_assert_uint_eq(h.frag_length, 72);
	ck_assert_uint_eq(h.call_id, 1);
	ck_assert_int_eq(dcerpc_bind_decode(pdu, len, &h, &b), DCERPC_OK);
	ck_assert_uint_eq(b.max_xmit_frag, 4280);
	ck_assert_uint_eq(b.max_recv_frag, 4280);
	ck_assert_uint_eq(b.n_ctx, 1);
	ck_assert(dcerpc_syntax_match(&b.ctx[0].abstract,
	    &pipe_iface_srvsvc.syntax));
	dcerpc_ctx_ts(&b.ctx[0], 0, &ts);
	ck_assert(dcerpc_syntax_match(&ts, &dcerpc_syntax_ndr20));
	free(pdu);
}
END_TEST

START_TEST(test_bind_ack_like_samba)
{
	struct rpc_pipe *p = pipe_open("\\srvsvc", &test_conf, "alice");
	uint8_t out[256], *b, *want;
	size_t len, wlen, n;
	unsigned nmsg;

	ck_assert_ptr_nonnull(p);
	b = test_hex(fx_bind, &len);
	want = test_hex(fx_bind_ack, &wlen);
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	n = drain(p, out, sizeof(out), &nmsg);
	ck_assert_uint_eq(nmsg, 1);
	ck_assert_uint_eq(n, wlen);
	/* Same bytes but the association group id and the case of "PIPE". */
	ck_assert_mem_eq(out, want, 20);
	ck_assert_mem_eq(out + 24, want + 24, 2);
	ck_assert(strncasecmp((char *)out + 26, (char *)want + 26, 13) == 0);
	ck_assert_mem_eq(out + 39, want + 39, wlen - 39);
	ck_assert_uint_ne(le32_get(out + 20), 0);
	free(b);
	free(want);
	pipe_close(p);
}
END_TEST

/* A bind with three contexts, as Windows clients send it. */
START_TEST(test_bind_three_contexts)
{
	struct rpc_pipe *p = pipe_open("srvsvc", &test_conf, "");
	uint8_t pdu[256], out[256];
	struct wcur w;
	struct cur c;
	unsigned nmsg, i;
	size_t n;
	static const uint8_t btfn[20] = {
		0x2c, 0x1c, 0xb7, 0x6c, 0x12, 0x98, 0x40, 0x45,
		0x03, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0 };
	const struct dcerpc_syntax *ab = &pipe_iface_srvsvc.syntax;

	wcur_init(&w, pdu, sizeof(pdu));
	wcur_bytes(&w, "\x05\x00\x0b\x03\x10\x00\x00\x00", 8);
	wcur_le16(&w, 16 + 12 + 3 * 44);
	wcur_le16(&w, 0);
	wcur_le32(&w, 7);
	wcur_le16(&w, 5840);
	wcur_le16(&w, 5840);
	wcur_le32(&w, 0);
	wcur_le32(&w, 3);
	for (i = 0; i < 3; i++) {
		wcur_le16(&w, (uint16_t)i);
		wcur_le16(&w, 1);
		wcur_le32(&w, ab->uuid.time_low);
		wcur_le16(&w, ab->uuid.time_mid);
		wcur_le16(&w, ab->uuid.time_hi);
		wcur_bytes(&w, ab->uuid.rest, 8);
		wcur_le32(&w, 3);
		if (i == 0) {
			wcur_le32(&w, dcerpc_syntax_ndr20.uuid.time_low);
			wcur_le16(&w, dcerpc_syntax_ndr20.uuid.time_mid);
			wcur_le16(&w, dcerpc_syntax_ndr20.uuid.time_hi);
			wcur_bytes(&w, dcerpc_syntax_ndr20.uuid.rest, 8);
			wcur_le32(&w, 2);
		} else if (i == 1) {
			wcur_le32(&w, dcerpc_syntax_ndr64.uuid.time_low);
			wcur_le16(&w, dcerpc_syntax_ndr64.uuid.time_mid);
			wcur_le16(&w, dcerpc_syntax_ndr64.uuid.time_hi);
			wcur_bytes(&w, dcerpc_syntax_ndr64.uuid.rest, 8);
			wcur_le32(&w, 1);
		} else
			wcur_bytes(&w, btfn, 20);
	}
	ck_assert_int_eq(w.err, 0);
	ck_assert_int_eq(pipe_write(p, pdu, wcur_off(&w)), 0);
	n = drain(p, out, sizeof(out), &nmsg);
	ck_assert_uint_eq(nmsg, 1);
	cur_init(&c, out, n);
	cur_skip(&c, 16);
	ck_assert_uint_eq(cur_le16(&c), 5840);
	ck_assert_uint_eq(cur_le16(&c), 5840);
	cur_skip(&c, 4);
	ck_assert_uint_eq(cur_le16(&c), 13);
	cur_skip(&c, 13 + 1);		/* address and pad to 4 */
	ck_assert_uint_eq(cur_u8(&c), 3);
	cur_skip(&c, 3);
	ck_assert_uint_eq(cur_le16(&c), DCERPC_RESULT_ACCEPTANCE);
	cur_skip(&c, 22);
	ck_assert_uint_eq(cur_le16(&c), DCERPC_RESULT_PROVIDER_REJECTION);
	ck_assert_uint_eq(cur_le16(&c),
	    DCERPC_REASON_TRANSFER_SYNTAXES_NOT_SUPPORTED);
	cur_skip(&c, 20);
	ck_assert_uint_eq(cur_le16(&c), DCERPC_RESULT_NEGOTIATE_ACK);
	ck_assert_uint_eq(cur_le16(&c), DCERPC_BTFN_KEEP_CONN_ON_ORPHAN);
	cur_skip(&c, 20);
	ck_assert_int_eq(c.err, 0);
	ck_assert_uint_eq(cur_left(&c), 0);
	pipe_close(p);
}
END_TEST

static void
expect_single(struct rpc_pipe *p, uint8_t ptype, uint32_t status)
{
	uint8_t out[512];
	unsigned nmsg;
	size_t n = drain(p, out, sizeof(out), &nmsg);

	ck_assert_uint_eq(nmsg, 1);
	ck_assert_uint_eq(dcerpc_frag_length(out, n), n);
	ck_assert_uint_eq(out[2], ptype);
	if (ptype == DCERPC_PKT_FAULT) {
		ck_assert_uint_eq(n, DCERPC_FAULT_LEN);
		ck_assert_uint_eq(le32_get(out + 24), status);
	} else if (ptype == DCERPC_PKT_BIND_NAK)
		ck_assert_uint_eq(le16_get(out + 16), status);
}

START_TEST(test_bind_wrong_interface)
{
	struct rpc_pipe *p = pipe_open("wkssvc", &test_conf, "alice");
	uint8_t out[256], *b;
	size_t len, n;
	unsigned nmsg;

	b = test_hex(fx_bind, &len);
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	n = drain(p, out, sizeof(out), &nmsg);
	ck_assert_uint_eq(n, 68);
	ck_assert_uint_eq(out[2], DCERPC_PKT_BIND_ACK);
	ck_assert_uint_eq(le16_get(out + 44), DCERPC_RESULT_PROVIDER_REJECTION);
	ck_assert_uint_eq(le16_get(out + 46),
	    DCERPC_REASON_ABSTRACT_SYNTAX_NOT_SUPPORTED);
	/* No context was accepted, so a request is an unknown interface. */
	free(b);
	b = test_hex(fx_enum1, &len);
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	expect_single(p, DCERPC_PKT_FAULT, DCERPC_NCA_S_UNKNOWN_IF);
	free(b);
	pipe_close(p);
}
END_TEST

START_TEST(test_bind_rejects)
{
	struct rpc_pipe *p;
	uint8_t *b;
	size_t len;

	/* Big-endian data representation: frag_length read big-endian. */
	p = pipe_open("srvsvc", &test_conf, "alice");
	b = test_hex(fx_bind, &len);
	b[4] = 0x00;
	b[8] = 0;
	b[9] = 72;
	/* call id 7, big-endian: the nak answers that call, or the client
	 * waits for ever */
	memcpy(b + 12, "\x00\x00\x00\x07", 4);
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	{
		uint8_t out[512];
		unsigned nmsg;
		size_t n = drain(p, out, sizeof(out), &nmsg);

		ck_assert_uint_eq(nmsg, 1);
		ck_assert_uint_eq(dcerpc_frag_length(out, n), n);
		ck_assert_uint_eq(out[2], DCERPC_PKT_BIND_NAK);
		ck_assert_uint_eq(le16_get(out + 16),
		    DCERPC_NAK_REASON_NOT_SPECIFIED);
		ck_assert_uint_eq(le32_get(out + 12), 7);
	}
	pipe_close(p);
	free(b);

	/* RPC version 4 */
	p = pipe_open("srvsvc", &test_conf, "alice");
	b = test_hex(fx_bind, &len);
	b[0] = 4;
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	expect_single(p, DCERPC_PKT_BIND_NAK,
	    DCERPC_NAK_PROTOCOL_VERSION_NOT_SUPPORTED);
	/* A second bind on the same pipe */
	b[0] = 5;
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	expect_single(p, DCERPC_PKT_BIND_ACK, 0);
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	expect_single(p, DCERPC_PKT_BIND_NAK, DCERPC_NAK_REASON_NOT_SPECIFIED);
	pipe_close(p);
	free(b);

	/* Fragments smaller than MS-RPCE allows */
	p = pipe_open("srvsvc", &test_conf, "alice");
	b = test_hex(fx_bind, &len);
	le16_put(b + 18, 512);
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	expect_single(p, DCERPC_PKT_BIND_NAK, DCERPC_NAK_LOCAL_LIMIT_EXCEEDED);
	pipe_close(p);
	free(b);

	ck_assert_ptr_null(pipe_open("nosuchpipe", &test_conf, "alice"));
	ck_assert_ptr_nonnull(pipe_lookup("\\PIPE\\SRVSVC"));
}
END_TEST

START_TEST(test_request_before_bind)
{
	struct rpc_pipe *p = pipe_open("srvsvc", &test_conf, "alice");
	uint8_t *b;
	size_t len;

	b = test_hex(fx_enum1, &len);
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	expect_single(p, DCERPC_PKT_FAULT, DCERPC_NCA_S_PROTO_ERROR);
	free(b);
	pipe_close(p);
}
END_TEST

START_TEST(test_unknown_opnum)
{
	struct rpc_pipe *p = bound_pipe();
	uint8_t *b, out[64];
	size_t len;
	unsigned nmsg;

	b = test_hex(fx_enum1, &len);
	le16_put(b + 22, 99);
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	ck_assert_uint_eq(drain(p, out, sizeof(out), &nmsg), 32);
	ck_assert_uint_eq(out[2], DCERPC_PKT_FAULT);
	ck_assert_uint_eq(out[3] & DCERPC_PFC_DID_NOT_EXECUTE,
	    DCERPC_PFC_DID_NOT_EXECUTE);
	ck_assert_uint_eq(le32_get(out + 12), 2);	/* call id */
	ck_assert_uint_eq(le32_get(out + 24), DCERPC_NCA_S_OP_RNG_ERROR);
	free(b);
	pipe_close(p);
}
END_TEST

/* The response to fx_enum1 fed whole, byte by byte, and in 2 fragments. */
START_TEST(test_request_fragments)
{
	struct rpc_pipe *p;
	uint8_t *b, whole[1024], out[1024], frag[256];
	size_t len, n1, n, i, cut;
	unsigned nmsg;
	struct wcur w;

	b = test_hex(fx_enum1, &len);
	p = bound_pipe();
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	n1 = drain(p, whole, sizeof(whole), &nmsg);
	ck_assert_uint_eq(nmsg, 1);
	ck_assert_uint_eq(whole[2], DCERPC_PKT_RESPONSE);
	pipe_close(p);

	p = bound_pipe();
	for (i = 0; i < len; i++) {
		ck_assert_uint_eq(pipe_avail(p), 0);
		ck_assert_int_eq(pipe_write(p, b + i, 1), 0);
	}
	n = drain(p, out, sizeof(out), &nmsg);
	ck_assert_uint_eq(n, n1);
	ck_assert_mem_eq(out, whole, n);
	pipe_close(p);

	/* Split the stub at 8 bytes: first fragment, then the last one. */
	p = bound_pipe();
	cut = 24 + 8;
	memcpy(frag, b, cut);
	frag[3] = DCERPC_PFC_FIRST_FRAG;
	le16_put(frag + 8, (uint16_t)cut);
	ck_assert_int_eq(pipe_write(p, frag, cut), 0);
	ck_assert_uint_eq(pipe_avail(p), 0);
	wcur_init(&w, frag, sizeof(frag));
	wcur_bytes(&w, b, 24);
	wcur_bytes(&w, b + cut, len - cut);
	frag[3] = DCERPC_PFC_LAST_FRAG;
	le16_put(frag + 8, (uint16_t)wcur_off(&w));
	ck_assert_int_eq(pipe_write(p, frag, wcur_off(&w)), 0);
	n = drain(p, out, sizeof(out), &nmsg);
	ck_assert_uint_eq(n, n1);
	ck_assert_mem_eq(out, whole, n);

	/* A middle fragment of another call id is a protocol error. */
	frag[3] = 0;
	le32_put(frag + 12, 77);
	ck_assert_int_eq(pipe_write(p, frag, wcur_off(&w)), 0);
	expect_single(p, DCERPC_PKT_FAULT, DCERPC_NCA_S_PROTO_ERROR);
	pipe_close(p);
	free(b);
}
END_TEST

/* Many shares and small fragments: the response is cut into fragments. */
START_TEST(test_response_fragmentation)
{
	enum { NS = 300 };
	static struct conf_share many[NS];
	static char names[NS][32];
	struct conf c = test_conf;
	struct rpc_pipe *p;
	uint8_t *b, *stub, msg[8192];
	size_t len, off = 0, n, frags = 0, total = 0;
	int more, i;
	struct cur cur;
	char name[64];

	for (i = 0; i < NS; i++) {
		snprintf(names[i], sizeof(names[i]), "share%03d", i);
		many[i].name = names[i];
		many[i].comment = "a comment long enough to need fragments";
		many[i].browseable = 1;
		many[i].is_ipc = i == 0;
	}
	c.shares = many;
	c.nshares = NS;
	p = pipe_open("srvsvc", &c, "alice");
	b = test_hex(fx_bind, &len);
	le16_put(b + 16, 1432);		/* max_xmit_frag */
	le16_put(b + 18, 1432);		/* max_recv_frag */
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	n = pipe_read(p, msg, sizeof(msg), &more);
	ck_assert_uint_eq(le16_get(msg + 16), 1432);
	free(b);

	b = test_hex(fx_enum1, &len);
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	stub = malloc(PIPE_MAX_RSP_STUB);
	for (i = 0; i < 1000 && pipe_avail(p) > 0; i++) {
		/* A short read first: the message-mode overflow case. */
		n = pipe_read(p, msg, 20, &more);
		if (msg[2] == DCERPC_PKT_FAULT)
			ck_abort_msg("fault 0x%08x", le32_get(msg + 24));
		ck_assert_uint_eq(n, 20);
		ck_assert_int_eq(more, 1);
		n += pipe_read(p, msg + 20, sizeof(msg) - 20, &more);
		ck_assert_int_eq(more, 0);
		ck_assert_uint_le(n, 1432);
		ck_assert_uint_eq(le16_get(msg + 8), n);
		ck_assert_uint_eq(msg[2], DCERPC_PKT_RESPONSE);
		ck_assert_uint_eq(msg[3] & DCERPC_PFC_FIRST_FRAG,
		    frags == 0 ? DCERPC_PFC_FIRST_FRAG : 0);
		ck_assert_uint_eq((n - 24) % 8 == 0 ||
		    (msg[3] & DCERPC_PFC_LAST_FRAG), 1);
		memcpy(stub + off, msg + 24, n - 24);
		off += n - 24;
		frags++;
		if (msg[3] & DCERPC_PFC_LAST_FRAG)
			total = off;
	}
	ck_assert_uint_gt(frags, 10);
	ck_assert_uint_eq(total, off);
	/* The reassembled stub is the whole list. */
	cur_init(&cur, stub, off);
	ck_assert_uint_eq(ndr_u32(&cur), 1);
	ck_assert_uint_eq(ndr_u32(&cur), 1);
	ck_assert_uint_ne(ndr_ptr(&cur), 0);
	ck_assert_uint_eq(ndr_u32(&cur), NS);
	ck_assert_uint_ne(ndr_ptr(&cur), 0);
	ck_assert_uint_eq(ndr_u32(&cur), NS);
	cur_skip(&cur, (size_t)NS * 12);
	for (i = 0; i < NS; i++) {
		ndr_string(&cur, name, sizeof(name));
		ck_assert_str_eq(name, names[i]);
		ndr_string(&cur, name, sizeof(name));
	}
	ck_assert_uint_eq(ndr_u32(&cur), NS);
	ck_assert_uint_ne(ndr_ptr(&cur), 0);
	ck_assert_uint_eq(ndr_u32(&cur), 0);
	ck_assert_uint_eq(ndr_u32(&cur), 0);	/* WERR_OK */
	ck_assert_int_eq(cur.err, 0);
	ck_assert_uint_eq(cur_left(&cur), 0);
	free(stub);
	free(b);
	pipe_close(p);
}
END_TEST

/* Decoders on every truncation of a whole PDU, in exact-size buffers. */
START_TEST(test_decoder_truncations)
{
	const char *fx[] = { fx_bind, fx_enum1 };
	struct dcerpc_hdr h;
	struct dcerpc_bind b;
	struct dcerpc_request r;
	uint8_t *pdu, *t;
	size_t len, k, i;

	for (i = 0; i < 2; i++) {
		pdu = test_hex(fx[i], &len);
		for (k = 0; k < len; k++) {
			t = malloc(k ? k : 1);
			memcpy(t, pdu, k);
			ck_assert_int_ne(dcerpc_hdr_decode(t, k, &h), DCERPC_OK);
			/* Even a header that claims k bytes must not read on. */
			if (k >= 16) {
				le16_put(t + 8, (uint16_t)k);
				if (dcerpc_hdr_decode(t, k, &h) == DCERPC_OK) {
					if (i == 0)
						(void)dcerpc_bind_decode(t, k, &h, &b);
					else if (dcerpc_request_decode(t, k, &h, &r) == 0)
						ck_assert_uint_le(r.stub_len, k - 24);
				}
			}
			free(t);
		}
		free(pdu);
	}
}
END_TEST

/* Every short PDU (frag_length patched) gets exactly one error answer. */
START_TEST(test_pipe_truncations)
{
	struct rpc_pipe *p;
	uint8_t *bind, *req, *t, out[512];
	size_t blen, rlen, k, n;
	unsigned nmsg;

	bind = test_hex(fx_bind, &blen);
	req = test_hex(fx_enum1, &rlen);
	for (k = 16; k < blen; k++) {
		p = pipe_open("srvsvc", &test_conf, "alice");
		t = malloc(k);
		memcpy(t, bind, k);
		le16_put(t + 8, (uint16_t)k);
		ck_assert_int_eq(pipe_write(p, t, k), 0);
		n = drain(p, out, sizeof(out), &nmsg);
		ck_assert_uint_eq(nmsg, 1);
		/* Down to the end of the context header the bind is nakked. */
		ck_assert_uint_eq(out[2], DCERPC_PKT_BIND_NAK);
		ck_assert_uint_eq(dcerpc_frag_length(out, n), n);
		free(t);
		pipe_close(p);
	}
	for (k = 16; k < rlen; k++) {
		p = bound_pipe();
		t = malloc(k);
		memcpy(t, req, k);
		le16_put(t + 8, (uint16_t)k);
		ck_assert_int_eq(pipe_write(p, t, k), 0);
		n = drain(p, out, sizeof(out), &nmsg);
		ck_assert_uint_eq(nmsg, 1);
		ck_assert_uint_eq(out[2], DCERPC_PKT_FAULT);
		ck_assert_uint_eq(le32_get(out + 24), k < 24 ?
		    DCERPC_NCA_S_PROTO_ERROR : DCERPC_FAULT_NDR);
		free(t);
		pipe_close(p);
	}
	/* frag_length below a header loses the stream. */
	p = pipe_open("srvsvc", &test_conf, "alice");
	le16_put(bind + 8, 10);
	ck_assert_int_eq(pipe_write(p, bind, blen), -EPIPE);
	pipe_close(p);
	free(bind);
	free(req);
}
END_TEST

/* A PDU longer than we accept is answered and skipped, not buffered. */
START_TEST(test_oversized_pdu)
{
	struct rpc_pipe *p = bound_pipe();
	uint8_t *big = calloc(1, 9000), *b;
	size_t len;

	memcpy(big, "\x05\x00\x00\x03\x10\x00\x00\x00", 8);
	le16_put(big + 8, 9000);
	le32_put(big + 12, 5);
	ck_assert_int_eq(pipe_write(p, big, 5000), 0);
	expect_single(p, DCERPC_PKT_FAULT, DCERPC_NCA_S_PROTO_ERROR);
	ck_assert_int_eq(pipe_write(p, big + 5000, 4000), 0);
	ck_assert_uint_eq(pipe_avail(p), 0);
	/* And the stream is still in step. */
	b = test_hex(fx_enum1, &len);
	ck_assert_int_eq(pipe_write(p, b, len), 0);
	ck_assert_uint_gt(pipe_avail(p), 0);
	free(b);
	free(big);
	pipe_close(p);
}
END_TEST

START_TEST(test_ndr_strings)
{
	uint8_t buf[256];
	struct ndr_w w;
	struct cur c;
	char s[64];

	ndr_w_init(&w, buf, sizeof(buf));
	ndr_put_u16(&w, 1);
	ndr_put_string(&w, "caf\xc3\xa9 \xf0\x9f\x98\x80");	/* café 😀 */
	ndr_put_ptr(&w, 1);
	ndr_put_ptr(&w, 1);
	ck_assert_int_eq(w.w.err, 0);
	/* u16, pad 2, max 8, off 0, actual 8, 8 units */
	ck_assert_uint_eq(wcur_off(&w.w), 4 + 12 + 16 + 8);
	ck_assert_uint_eq(le32_get(buf + 4), 8);
	ck_assert_uint_eq(le16_get(buf + 16 + 6), 0xe9);
	ck_assert_uint_eq(le16_get(buf + 16 + 8), 0x20);
	ck_assert_uint_eq(le16_get(buf + 16 + 10), 0xD83D);
	ck_assert_uint_eq(le16_get(buf + 16 + 12), 0xDE00);
	ck_assert_uint_eq(le32_get(buf + 32), NDR_REFID_FIRST);
	ck_assert_uint_eq(le32_get(buf + 36), NDR_REFID_FIRST + 4);
	cur_init(&c, buf, wcur_off(&w.w));
	ck_assert_uint_eq(ndr_u16(&c), 1);
	ndr_string(&c, s, sizeof(s));
	ck_assert_str_eq(s, "caf\xc3\xa9 \xf0\x9f\x98\x80");
	ck_assert_int_eq(c.err, 0);
	/* Too small an output buffer is an error, not a cut name. */
	cur_init(&c, buf, wcur_off(&w.w));
	(void)ndr_u16(&c);
	ndr_string(&c, s, 4);
	ck_assert_int_ne(c.err, 0);
	/* Bad counts */
	ndr_w_init(&w, buf, sizeof(buf));
	ndr_put_u32(&w, 0xFFFFFFFFu);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 0x7FFFFFFFu);
	cur_init(&c, buf, wcur_off(&w.w));
	ndr_string(&c, s, sizeof(s));
	ck_assert_int_ne(c.err, 0);
	ndr_w_init(&w, buf, sizeof(buf));
	ndr_put_u32(&w, 2);
	ndr_put_u32(&w, 1);		/* offset */
	ndr_put_u32(&w, 1);
	ndr_put_u16(&w, 0);
	cur_init(&c, buf, wcur_off(&w.w));
	ndr_string(&c, s, sizeof(s));
	ck_assert_int_ne(c.err, 0);
	ndr_w_init(&w, buf, sizeof(buf));
	ndr_put_u32(&w, 1);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 2);		/* actual > max */
	ndr_put_u16(&w, 'a');
	ndr_put_u16(&w, 0);
	cur_init(&c, buf, wcur_off(&w.w));
	ndr_string(&c, s, sizeof(s));
	ck_assert_int_ne(c.err, 0);
	ndr_w_init(&w, buf, sizeof(buf));
	ndr_put_u32(&w, 2);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 2);
	ndr_put_u16(&w, 'a');
	ndr_put_u16(&w, 'b');		/* no terminating NUL */
	cur_init(&c, buf, wcur_off(&w.w));
	ndr_string(&c, s, sizeof(s));
	ck_assert_int_ne(c.err, 0);
}
END_TEST

static Suite *
dcerpc_suite(void)
{
	Suite *s = suite_create("dcerpc");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_bind_decode_fixture);
	tcase_add_test(tc, test_bind_ack_like_samba);
	tcase_add_test(tc, test_bind_three_contexts);
	tcase_add_test(tc, test_bind_wrong_interface);
	tcase_add_test(tc, test_bind_rejects);
	tcase_add_test(tc, test_request_before_bind);
	tcase_add_test(tc, test_unknown_opnum);
	tcase_add_test(tc, test_request_fragments);
	tcase_add_test(tc, test_response_fragmentation);
	tcase_add_test(tc, test_decoder_truncations);
	tcase_add_test(tc, test_pipe_truncations);
	tcase_add_test(tc, test_oversized_pdu);
	tcase_add_test(tc, test_ndr_strings);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(dcerpc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
