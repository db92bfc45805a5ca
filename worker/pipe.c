/* Named pipe endpoints: DCE/RPC framing over a byte stream (worker/pipe.h). */
#include "worker/pipe.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"

struct rpc_pipe {
	const struct pipe_iface	*iface;
	struct pipe_env		 env;
	int			 bound;
	uint16_t		 max_xmit_frag;	/* what we send */
	uint16_t		 max_recv_frag;	/* what we accept */
	uint32_t		 assoc_group_id;
	uint16_t		 ctx_ok[DCERPC_MAX_CTX];	/* accepted context ids */
	unsigned		 n_ctx_ok;

	/* The PDU being received, and bytes of an oversized one to drop. */
	uint8_t			 in[PIPE_MAX_FRAG];
	size_t			 in_len;
	size_t			 discard;

	/* The request being reassembled from its fragments. */
	int			 req_active;
	int			 req_bad;	/* drop the rest, fault at the end */
	uint32_t		 req_fault;
	uint32_t		 req_call_id;
	uint16_t		 req_ctx_id;
	uint16_t		 req_opnum;
	uint8_t			*req;
	size_t			 req_len, req_cap;

	/* Scratch for one response stub, kept between calls. */
	uint8_t			*stub;
	size_t			 stub_cap;

	/* Whole PDUs waiting to be read; msg_left of the one at out_off. */
	uint8_t			*out;
	size_t			 out_len, out_off, out_cap;
	size_t			 msg_left;
};

static uint32_t pipe_next_assoc_group = 0x5a11;

const struct pipe_iface *
pipe_lookup(const char *name)
{
	static const struct pipe_iface *const ifaces[] = {
		&pipe_iface_srvsvc, &pipe_iface_wkssvc, &pipe_iface_lsarpc,
		&pipe_iface_samr,
	};
	size_t i;

	while (*name == '\\' || *name == '/')
		name++;
	if (strncasecmp(name, "PIPE\\", 5) == 0)
		name += 5;
	for (i = 0; i < sizeof(ifaces) / sizeof(ifaces[0]); i++)
		if (strcasecmp(name, ifaces[i]->name) == 0)
			return ifaces[i];
	return NULL;
}

/*
 * Is this worker's user an administrator for srvsvc: a member of `server
 * admin group`?  The worker is pinned to one user, so its own groups say.
 */
static int
pipe_user_admin(const struct conf *conf)
{
	gid_t groups[NGROUPS_MAX];
	struct group *gr;
	int n, i;

	if (conf == NULL || conf->admin_group == NULL ||
	    conf->admin_group[0] == '\0' ||
	    (gr = getgrnam(conf->admin_group)) == NULL)
		return 0;
	if (getegid() == gr->gr_gid)
		return 1;
	if ((n = getgroups(NGROUPS_MAX, groups)) < 0)
		return 0;
	for (i = 0; i < n; i++)
		if (groups[i] == gr->gr_gid)
			return 1;
	return 0;
}

uint32_t (*pipe_admin_ask)(const struct admmsg_req *);

struct rpc_pipe *
pipe_open(const char *name, const struct conf *conf, const char *user)
{
	const struct pipe_iface *iface = pipe_lookup(name);
	struct rpc_pipe *p;

	if (iface == NULL) {
		errno = ENOENT;
		return NULL;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->iface = iface;
	p->env.conf = conf;
	if (user != NULL)
		strlcpy(p->env.user, user, sizeof(p->env.user));
	p->env.anonymous = p->env.user[0] == '\0';
	p->env.admin = !p->env.anonymous && pipe_user_admin(conf);
	p->max_xmit_frag = p->max_recv_frag = PIPE_MAX_FRAG;
	return p;
}

void
pipe_set_guest(struct rpc_pipe *p, int guest)
{
	p->env.guest = guest;
}

void
pipe_set_state(struct rpc_pipe *p, struct shm *shm)
{
	p->env.shm = shm;
}

void
pipe_close(struct rpc_pipe *p)
{
	if (p == NULL)
		return;
	free(p->req);
	free(p->stub);
	free(p->out);
	free(p);
}

const struct pipe_iface *
pipe_iface(const struct rpc_pipe *p)
{
	return p->iface;
}

/* Grows *buf to hold at least need bytes (doubling, up to max); 0 or -1. */
static int
pipe_grow(uint8_t **buf, size_t *cap, size_t need, size_t max)
{
	size_t n = *cap ? *cap : 1024;
	uint8_t *nb;

	if (need <= *cap)
		return 0;
	if (need > max)
		return -1;
	while (n < need)
		n *= 2;
	if (n > max)
		n = max;
	if ((nb = realloc(*buf, n)) == NULL)
		return -1;
	*buf = nb;
	*cap = n;
	return 0;
}

/*
 * A write cursor over room for at least need more bytes at the end of the
 * output queue; err set when memory runs out.
 */
static void
pipe_out_begin(struct rpc_pipe *p, struct wcur *w, size_t need)
{
	if (p->out_off == p->out_len)
		p->out_off = p->out_len = 0;
	if (pipe_grow(&p->out, &p->out_cap, p->out_len + need,
	    PIPE_MAX_RSP_STUB + PIPE_MAX_RSP_STUB / 8) < 0) {
		wcur_init(w, NULL, 0);
		w->err = 1;
		return;
	}
	wcur_init(w, p->out + p->out_len, p->out_cap - p->out_len);
}

static void
pipe_out_commit(struct rpc_pipe *p, struct wcur *w)
{
	if (w->err)
		return;
	p->out_len += wcur_off(w);
}

static void
pipe_send_fault(struct rpc_pipe *p, uint32_t call_id, uint16_t ctx_id,
    uint8_t flags, uint32_t status)
{
	struct wcur w;

	log_debug(5, "pipe %s: fault 0x%08x for call %u", p->iface->name,
	    status, call_id);
	pipe_out_begin(p, &w, DCERPC_FAULT_LEN);
	dcerpc_fault_encode(&w, call_id, ctx_id, flags, status);
	pipe_out_commit(p, &w);
}

static void
pipe_send_nak(struct rpc_pipe *p, uint32_t call_id, uint16_t reason)
{
	struct wcur w;

	log_debug(5, "pipe %s: bind_nak reason %u", p->iface->name, reason);
	pipe_out_begin(p, &w, 32);
	dcerpc_bind_nak_encode(&w, call_id, reason);
	pipe_out_commit(p, &w);
}

/* One presentation context of a bind: accept, negotiate_ack or reject. */
static void
pipe_bind_ctx(struct rpc_pipe *p, const struct dcerpc_ctx *x,
    struct dcerpc_result *r)
{
	struct dcerpc_syntax ts;
	uint16_t features;
	unsigned i;
	int ndr = 0;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < x->n_ts; i++) {
		dcerpc_ctx_ts(x, i, &ts);
		if (dcerpc_syntax_is_btfn(&ts, &features)) {
			/*
			 * We keep the connection when a call is orphaned (we
			 * drop orphaned PDUs and carry on); we have no
			 * security contexts to multiplex, so we do not claim
			 * that bit.
			 */
			r->result = DCERPC_RESULT_NEGOTIATE_ACK;
			r->reason = features & DCERPC_BTFN_KEEP_CONN_ON_ORPHAN;
			return;
		}
		if (dcerpc_syntax_match(&ts, &dcerpc_syntax_ndr20))
			ndr = 1;
	}
	r->result = DCERPC_RESULT_PROVIDER_REJECTION;
	if (!dcerpc_syntax_match(&x->abstract, &p->iface->syntax)) {
		r->reason = DCERPC_REASON_ABSTRACT_SYNTAX_NOT_SUPPORTED;
		return;
	}
	if (!ndr) {
		r->reason = DCERPC_REASON_TRANSFER_SYNTAXES_NOT_SUPPORTED;
		return;
	}
	r->result = DCERPC_RESULT_ACCEPTANCE;
	r->reason = 0;
	r->ts = dcerpc_syntax_ndr20;
	for (i = 0; i < p->n_ctx_ok; i++)
		if (p->ctx_ok[i] == x->id)
			return;
	if (p->n_ctx_ok < DCERPC_MAX_CTX)
		p->ctx_ok[p->n_ctx_ok++] = x->id;
}

static void
pipe_bind(struct rpc_pipe *p, const uint8_t *pdu, size_t len,
    const struct dcerpc_hdr *h)
{
	struct dcerpc_result res[DCERPC_MAX_CTX];
	struct dcerpc_bind b;
	struct wcur w;
	int alter = h->ptype == DCERPC_PKT_ALTER;
	unsigned i;
	int rc;

	if (h->auth_length > 0) {
		/* No authentication over the pipe: the SMB session is it. */
		pipe_send_nak(p, h->call_id, DCERPC_NAK_AUTH_TYPE_NOT_RECOGNIZED);
		return;
	}
	if (!alter && p->bound) {
		/* MS-RPCE 3.3.1.5.6: one bind per connection. */
		pipe_send_nak(p, h->call_id, DCERPC_NAK_REASON_NOT_SPECIFIED);
		return;
	}
	if (alter && !p->bound) {
		pipe_send_fault(p, h->call_id, 0, DCERPC_PFC_DID_NOT_EXECUTE,
		    DCERPC_NCA_S_PROTO_ERROR);
		return;
	}
	rc = dcerpc_bind_decode(pdu, len, h, &b);
	if (rc != DCERPC_OK) {
		if (alter)
			pipe_send_fault(p, h->call_id, 0,
			    DCERPC_PFC_DID_NOT_EXECUTE, DCERPC_NCA_S_PROTO_ERROR);
		else
			pipe_send_nak(p, h->call_id, rc == DCERPC_E_LIMIT ?
			    DCERPC_NAK_LOCAL_LIMIT_EXCEEDED :
			    DCERPC_NAK_REASON_NOT_SPECIFIED);
		return;
	}
	if (!alter) {
		if (b.max_xmit_frag < PIPE_MIN_FRAG ||
		    b.max_recv_frag < PIPE_MIN_FRAG) {
			pipe_send_nak(p, h->call_id,
			    DCERPC_NAK_LOCAL_LIMIT_EXCEEDED);
			return;
		}
		/* Both directions get the smaller of the offers and ours. */
		p->max_recv_frag = b.max_xmit_frag < PIPE_MAX_FRAG ?
		    b.max_xmit_frag : PIPE_MAX_FRAG;
		p->max_xmit_frag = b.max_recv_frag < PIPE_MAX_FRAG ?
		    b.max_recv_frag : PIPE_MAX_FRAG;
		if (p->max_xmit_frag < p->max_recv_frag)
			p->max_recv_frag = p->max_xmit_frag;
		else
			p->max_xmit_frag = p->max_recv_frag;
		p->assoc_group_id = b.assoc_group_id != 0 ? b.assoc_group_id :
		    pipe_next_assoc_group++;
	}
	for (i = 0; i < b.n_ctx; i++)
		pipe_bind_ctx(p, &b.ctx[i], &res[i]);
	pipe_out_begin(p, &w, 64 + (size_t)b.n_ctx * 24);
	dcerpc_bind_ack_encode(&w, alter ? DCERPC_PKT_ALTER_RESP :
	    DCERPC_PKT_BIND_ACK, h->call_id, p->max_xmit_frag, p->max_recv_frag,
	    p->assoc_group_id, alter ? "" : p->iface->sec_addr, res, b.n_ctx);
	pipe_out_commit(p, &w);
	if (!w.err && !alter)
		p->bound = 1;
	log_debug(5, "pipe %s: %s call %u, %u contexts, frag %u",
	    p->iface->name, alter ? "alter_context" : "bind", h->call_id,
	    b.n_ctx, p->max_xmit_frag);
}

static int
pipe_ctx_accepted(const struct rpc_pipe *p, uint16_t id)
{
	unsigned i;

	for (i = 0; i < p->n_ctx_ok; i++)
		if (p->ctx_ok[i] == id)
			return 1;
	return 0;
}

/* Runs the reassembled request and queues its response fragments. */
static void
pipe_call(struct rpc_pipe *p)
{
	static uint64_t calls;	/* requests run by this worker */
	struct ndr_w nw;
	struct wcur w;
	struct cur in;
	uint32_t status;
	size_t stub_len, off, chunk, max_chunk;
	uint8_t flags;

	if (!pipe_ctx_accepted(p, p->req_ctx_id)) {
		pipe_send_fault(p, p->req_call_id, p->req_ctx_id,
		    DCERPC_PFC_DID_NOT_EXECUTE, DCERPC_NCA_S_UNKNOWN_IF);
		return;
	}
	if (p->stub == NULL && pipe_grow(&p->stub, &p->stub_cap, 4096,
	    PIPE_MAX_RSP_STUB) < 0)
		goto nomem;
	/* Bounded: the buffer doubles up to PIPE_MAX_RSP_STUB. */
	p->env.call = ++calls;
	for (;;) {
		/* An empty stub has no buffer yet; give the cursor a real one. */
		cur_init(&in, p->req != NULL ? p->req : (const uint8_t *)"",
		    p->req_len);
		ndr_w_init(&nw, p->stub, p->stub_cap);
		status = p->iface->call(&p->env, p->req_opnum, &in, &nw);
		if (status != 0 || !nw.w.err)
			break;
		if (pipe_grow(&p->stub, &p->stub_cap, p->stub_cap * 2,
		    PIPE_MAX_RSP_STUB) < 0)
			goto nomem;
	}
	if (status != 0) {
		pipe_send_fault(p, p->req_call_id, p->req_ctx_id,
		    status == DCERPC_NCA_S_OP_RNG_ERROR ?
		    DCERPC_PFC_DID_NOT_EXECUTE : 0, status);
		return;
	}
	stub_len = wcur_off(&nw.w);
	/* Stub bytes per fragment, a multiple of 8 as Windows sends. */
	max_chunk = ((size_t)p->max_xmit_frag - DCERPC_REQ_HDR_LEN) & ~(size_t)7;
	off = 0;
	do {
		chunk = stub_len - off < max_chunk ? stub_len - off : max_chunk;
		flags = 0;
		if (off == 0)
			flags |= DCERPC_PFC_FIRST_FRAG;
		if (off + chunk == stub_len)
			flags |= DCERPC_PFC_LAST_FRAG;
		pipe_out_begin(p, &w, DCERPC_REQ_HDR_LEN + chunk);
		dcerpc_response_hdr_encode(&w, p->req_call_id, flags,
		    (uint16_t)(DCERPC_REQ_HDR_LEN + chunk),
		    (uint32_t)(stub_len - off), p->req_ctx_id);
		wcur_bytes(&w, p->stub + off, chunk);
		if (w.err)
			goto nomem;
		pipe_out_commit(p, &w);
		off += chunk;
	} while (off < stub_len);
	return;
nomem:
	pipe_send_fault(p, p->req_call_id, p->req_ctx_id, 0,
	    DCERPC_NCA_S_FAULT_REMOTE_NO_MEMORY);
}

static void
pipe_request(struct rpc_pipe *p, const uint8_t *pdu, size_t len,
    const struct dcerpc_hdr *h)
{
	struct dcerpc_request r;

	if (!p->bound) {
		pipe_send_fault(p, h->call_id, 0, DCERPC_PFC_DID_NOT_EXECUTE,
		    DCERPC_NCA_S_PROTO_ERROR);
		return;
	}
	if (dcerpc_request_decode(pdu, len, h, &r) != DCERPC_OK) {
		pipe_send_fault(p, h->call_id, 0, DCERPC_PFC_DID_NOT_EXECUTE,
		    DCERPC_NCA_S_PROTO_ERROR);
		return;
	}
	if (h->pfc_flags & DCERPC_PFC_FIRST_FRAG) {
		/* A new call replaces an unfinished one (the client gave up). */
		p->req_active = 1;
		p->req_bad = 0;
		p->req_fault = 0;
		p->req_call_id = h->call_id;
		p->req_ctx_id = r.ctx_id;
		p->req_opnum = r.opnum;
		p->req_len = 0;
	} else if (!p->req_active || h->call_id != p->req_call_id) {
		pipe_send_fault(p, h->call_id, r.ctx_id,
		    DCERPC_PFC_DID_NOT_EXECUTE, DCERPC_NCA_S_PROTO_ERROR);
		return;
	}
	if (!p->req_bad && h->auth_length > 0) {
		/* We never agreed on authentication at bind time. */
		p->req_bad = 1;
		p->req_fault = DCERPC_FAULT_ACCESS_DENIED;
	}
	if (!p->req_bad && r.stub_len > 0) {
		if (pipe_grow(&p->req, &p->req_cap, p->req_len + r.stub_len,
		    PIPE_MAX_REQ_STUB) < 0) {
			p->req_bad = 1;
			p->req_fault = DCERPC_NCA_S_FAULT_REMOTE_NO_MEMORY;
		} else {
			memcpy(p->req + p->req_len, r.stub, r.stub_len);
			p->req_len += r.stub_len;
		}
	}
	if (!(h->pfc_flags & DCERPC_PFC_LAST_FRAG))
		return;
	p->req_active = 0;
	if (p->req_bad) {
		pipe_send_fault(p, p->req_call_id, p->req_ctx_id,
		    DCERPC_PFC_DID_NOT_EXECUTE, p->req_fault);
		return;
	}
	pipe_call(p);
}

/* One whole PDU of len bytes (len == its frag_length). */
static void
pipe_pdu(struct rpc_pipe *p, const uint8_t *pdu, size_t len)
{
	struct dcerpc_hdr h;
	int rc;

	rc = dcerpc_hdr_decode(pdu, len, &h);
	if (rc != DCERPC_OK) {
		log_debug(3, "pipe %s: bad PDU header (%d), ptype %u",
		    p->iface->name, rc, h.ptype);
		if (h.ptype == DCERPC_PKT_BIND)
			pipe_send_nak(p, h.call_id, rc == DCERPC_E_VERSION ?
			    DCERPC_NAK_PROTOCOL_VERSION_NOT_SUPPORTED :
			    DCERPC_NAK_REASON_NOT_SPECIFIED);
		else
			pipe_send_fault(p, h.call_id, 0,
			    DCERPC_PFC_DID_NOT_EXECUTE, rc == DCERPC_E_DREP ?
			    DCERPC_NCA_S_UNSUPPORTED_TYPE :
			    DCERPC_NCA_S_PROTO_ERROR);
		return;
	}
	switch (h.ptype) {
	case DCERPC_PKT_BIND:
	case DCERPC_PKT_ALTER:
		pipe_bind(p, pdu, len, &h);
		break;
	case DCERPC_PKT_REQUEST:
		pipe_request(p, pdu, len, &h);
		break;
	case DCERPC_PKT_ORPHANED:
	case DCERPC_PKT_CO_CANCEL:
		/* The client abandons the call: drop what we collected. */
		if (p->req_active && h.call_id == p->req_call_id)
			p->req_active = 0;
		break;
	case DCERPC_PKT_AUTH3:
	case DCERPC_PKT_SHUTDOWN:
		break;
	default:
		pipe_send_fault(p, h.call_id, 0, DCERPC_PFC_DID_NOT_EXECUTE,
		    DCERPC_NCA_S_PROTO_ERROR);
		break;
	}
}

int
pipe_write(struct rpc_pipe *p, const void *data, size_t len)
{
	const uint8_t *d = data;
	size_t k, fl;
	struct dcerpc_hdr h;

	/* Every pass consumes at least one byte: bounded by len. */
	while (len > 0) {
		if (p->discard > 0) {
			k = len < p->discard ? len : p->discard;
			p->discard -= k;
			d += k;
			len -= k;
			continue;
		}
		if (p->in_len < DCERPC_HDR_LEN) {
			k = DCERPC_HDR_LEN - p->in_len;
			k = len < k ? len : k;
			memcpy(p->in + p->in_len, d, k);
			p->in_len += k;
			d += k;
			len -= k;
			if (p->in_len < DCERPC_HDR_LEN)
				break;
		}
		fl = dcerpc_frag_length(p->in, p->in_len);
		if (fl < DCERPC_HDR_LEN) {
			log_debug(3, "pipe %s: frag_length %zu, stream lost",
			    p->iface->name, fl);
			p->in_len = 0;
			return -EPIPE;
		}
		if (fl > sizeof(p->in)) {
			/* Answer from the header alone and skip the body. */
			(void)dcerpc_hdr_decode(p->in, p->in_len, &h);
			if (h.ptype == DCERPC_PKT_BIND)
				pipe_send_nak(p, h.call_id,
				    DCERPC_NAK_LOCAL_LIMIT_EXCEEDED);
			else
				pipe_send_fault(p, h.call_id, 0,
				    DCERPC_PFC_DID_NOT_EXECUTE,
				    DCERPC_NCA_S_PROTO_ERROR);
			p->discard = fl - p->in_len;
			p->in_len = 0;
			continue;
		}
		k = fl - p->in_len;
		k = len < k ? len : k;
		memcpy(p->in + p->in_len, d, k);
		p->in_len += k;
		d += k;
		len -= k;
		if (p->in_len == fl) {
			pipe_pdu(p, p->in, fl);
			p->in_len = 0;
		}
	}
	return 0;
}

size_t
pipe_avail(const struct rpc_pipe *p)
{
	return p->out_len - p->out_off;
}

size_t
pipe_msg_left(const struct rpc_pipe *p)
{
	if (p->msg_left > 0)
		return p->msg_left;
	if (p->out_off < p->out_len)
		return dcerpc_frag_length(p->out + p->out_off,
		    p->out_len - p->out_off);
	return 0;
}

size_t
pipe_read(struct rpc_pipe *p, void *buf, size_t max, int *more)
{
	size_t n;

	*more = 0;
	if (p->out_off == p->out_len)
		return 0;
	if (p->msg_left == 0)
		p->msg_left = pipe_msg_left(p);
	n = max < p->msg_left ? max : p->msg_left;
	memcpy(buf, p->out + p->out_off, n);
	p->out_off += n;
	p->msg_left -= n;
	if (p->msg_left > 0)
		*more = 1;
	if (p->out_off == p->out_len)
		p->out_off = p->out_len = 0;
	return n;
}
