/*
 * DCE/RPC connection-oriented PDUs (C706 chapter 12, MS-RPCE 2.2.2) as
 * carried over a named pipe: bind, bind_ack, bind_nak, alter_context,
 * alter_context_resp, request, response and fault.  Only the little-endian,
 * ASCII data representation is accepted; a PDU in any other is recognised
 * (its frag_length is read in its own byte order so it can be skipped) and
 * reported as DCERPC_E_DREP for the caller to refuse.
 *
 * Decoders take a cursor at the start of a whole PDU (the pipe layer has
 * already cut the byte stream at frag_length) and return 0 or a
 * DCERPC_E_* code; encoders write whole PDUs through a write cursor and
 * leave its err set when the buffer is too small.
 */
#ifndef USMBD_PROTO_DCERPC_H
#define USMBD_PROTO_DCERPC_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"

#define DCERPC_HDR_LEN		16
#define DCERPC_REQ_HDR_LEN	24	/* request and response */
#define DCERPC_FAULT_LEN	32
#define DCERPC_AUTH_TRAILER_LEN	8	/* sec_trailer before auth_value */

/* C706 12.6.4.1 / MS-RPCE 2.2.2.x PTYPE */
#define DCERPC_PKT_REQUEST		0
#define DCERPC_PKT_RESPONSE		2
#define DCERPC_PKT_FAULT		3
#define DCERPC_PKT_BIND			11
#define DCERPC_PKT_BIND_ACK		12
#define DCERPC_PKT_BIND_NAK		13
#define DCERPC_PKT_ALTER		14
#define DCERPC_PKT_ALTER_RESP		15
#define DCERPC_PKT_AUTH3		16
#define DCERPC_PKT_SHUTDOWN		17
#define DCERPC_PKT_CO_CANCEL		18
#define DCERPC_PKT_ORPHANED		19

/* C706 12.6.3.1 pfc_flags */
#define DCERPC_PFC_FIRST_FRAG		0x01
#define DCERPC_PFC_LAST_FRAG		0x02
#define DCERPC_PFC_PENDING_CANCEL	0x04
#define DCERPC_PFC_CONC_MPX		0x10
#define DCERPC_PFC_DID_NOT_EXECUTE	0x20
#define DCERPC_PFC_MAYBE		0x40
#define DCERPC_PFC_OBJECT_UUID		0x80

/* packed_drep[0]: integer representation in the high nibble, chars low */
#define DCERPC_DREP_LE			0x10

/* C706 12.6.3.1 p_cont_def_result_t, MS-RPCE 2.2.2.4 negotiate_ack */
#define DCERPC_RESULT_ACCEPTANCE		0
#define DCERPC_RESULT_USER_REJECTION		1
#define DCERPC_RESULT_PROVIDER_REJECTION	2
#define DCERPC_RESULT_NEGOTIATE_ACK		3

/* C706 p_provider_reason_t */
#define DCERPC_REASON_NOT_SPECIFIED		0
#define DCERPC_REASON_ABSTRACT_SYNTAX_NOT_SUPPORTED	1
#define DCERPC_REASON_TRANSFER_SYNTAXES_NOT_SUPPORTED	2
#define DCERPC_REASON_LOCAL_LIMIT_EXCEEDED	3

/* C706 p_reject_reason_t (bind_nak) */
#define DCERPC_NAK_REASON_NOT_SPECIFIED		0
#define DCERPC_NAK_LOCAL_LIMIT_EXCEEDED		2
#define DCERPC_NAK_PROTOCOL_VERSION_NOT_SUPPORTED 4
#define DCERPC_NAK_AUTH_TYPE_NOT_RECOGNIZED	8

/* MS-RPCE 3.3.1.5.3 bind time feature negotiation bits */
#define DCERPC_BTFN_SEC_CTX_MULTIPLEXING	0x0001
#define DCERPC_BTFN_KEEP_CONN_ON_ORPHAN		0x0002

/* C706 appendix E / MS-RPCE 2.2.2.11 fault status codes */
#define DCERPC_NCA_S_OP_RNG_ERROR	0x1C010002u
/* a context handle the server does not know (C706 nca_s_fault_context_mismatch) */
#define DCERPC_NCA_S_CONTEXT_MISMATCH	0x1C00001Au
#define DCERPC_NCA_S_UNKNOWN_IF		0x1C010003u
#define DCERPC_NCA_S_PROTO_ERROR	0x1C01000Bu
#define DCERPC_NCA_S_UNSUPPORTED_TYPE	0x1C000017u
#define DCERPC_NCA_S_FAULT_REMOTE_NO_MEMORY 0x1C000012u
#define DCERPC_FAULT_ACCESS_DENIED	0x00000005u
#define DCERPC_FAULT_NDR		0x000006F7u	/* RPC_X_BAD_STUB_DATA */

/* Decoder results */
#define DCERPC_OK		0
#define DCERPC_E_SHORT		1	/* truncated or inconsistent lengths */
#define DCERPC_E_VERSION	2	/* rpc_vers is not 5.0 / 5.1 */
#define DCERPC_E_DREP		3	/* not little-endian ASCII */
#define DCERPC_E_LIMIT		4	/* more contexts than we keep */

struct dcerpc_uuid {
	uint32_t	time_low;
	uint16_t	time_mid;
	uint16_t	time_hi;
	uint8_t		rest[8];	/* clock_seq and node, in wire order */
};

/* p_syntax_id_t: an interface or transfer syntax and its version. */
struct dcerpc_syntax {
	struct dcerpc_uuid uuid;
	uint16_t	ver_major;
	uint16_t	ver_minor;
};

extern const struct dcerpc_syntax dcerpc_syntax_ndr20;	/* 8a885d04-1ceb-11c9-9fe8-08002b104860 v2 */
extern const struct dcerpc_syntax dcerpc_syntax_ndr64;	/* 71710533-beba-4937-8319-b5dbef9ccc36 v1 */

struct dcerpc_hdr {
	uint8_t		rpc_vers;
	uint8_t		rpc_vers_minor;
	uint8_t		ptype;
	uint8_t		pfc_flags;
	uint8_t		drep[4];
	uint16_t	frag_length;
	uint16_t	auth_length;
	uint32_t	call_id;
};

#define DCERPC_MAX_CTX		16

struct dcerpc_ctx {
	uint16_t	id;
	uint8_t		n_ts;
	struct dcerpc_syntax abstract;
	const uint8_t	*ts;		/* n_ts transfer syntaxes, 20 bytes each */
};

/* bind and alter_context (the same body) */
struct dcerpc_bind {
	uint16_t	max_xmit_frag;
	uint16_t	max_recv_frag;
	uint32_t	assoc_group_id;
	uint8_t		n_ctx;
	struct dcerpc_ctx ctx[DCERPC_MAX_CTX];
};

struct dcerpc_result {
	uint16_t	result;
	uint16_t	reason;		/* or the negotiate_ack feature bits */
	struct dcerpc_syntax ts;	/* zero unless accepted */
};

struct dcerpc_request {
	uint32_t	alloc_hint;
	uint16_t	ctx_id;
	uint16_t	opnum;
	int		has_object;
	struct dcerpc_uuid object;
	const uint8_t	*stub;
	size_t		stub_len;
};

int	dcerpc_uuid_eq(const struct dcerpc_uuid *, const struct dcerpc_uuid *);
/* Same uuid and major version, minor version no greater than ours. */
int	dcerpc_syntax_match(const struct dcerpc_syntax *offered,
	    const struct dcerpc_syntax *ours);
/* A bind time feature negotiation syntax (MS-RPCE 3.3.1.5.3): its bits. */
int	dcerpc_syntax_is_btfn(const struct dcerpc_syntax *, uint16_t *features);

/*
 * The frag_length of a PDU from its first bytes (in the byte order its
 * drep gives), or 0 when fewer than DCERPC_HDR_LEN bytes are at hand.
 */
uint16_t dcerpc_frag_length(const uint8_t *p, size_t len);
/* Decodes the common header of a whole PDU of len bytes. */
int	dcerpc_hdr_decode(const uint8_t *pdu, size_t len, struct dcerpc_hdr *);
int	dcerpc_bind_decode(const uint8_t *pdu, size_t len,
	    const struct dcerpc_hdr *, struct dcerpc_bind *);
/* The i-th transfer syntax of a presentation context. */
void	dcerpc_ctx_ts(const struct dcerpc_ctx *, unsigned i, struct dcerpc_syntax *);
int	dcerpc_request_decode(const uint8_t *pdu, size_t len,
	    const struct dcerpc_hdr *, struct dcerpc_request *);

/* bind_ack (ptype BIND_ACK) or alter_context_resp (ALTER_RESP). */
void	dcerpc_bind_ack_encode(struct wcur *, uint8_t ptype, uint32_t call_id,
	    uint16_t max_xmit_frag, uint16_t max_recv_frag,
	    uint32_t assoc_group_id, const char *sec_addr,
	    const struct dcerpc_result *, unsigned n);
void	dcerpc_bind_nak_encode(struct wcur *, uint32_t call_id, uint16_t reason);
/* The 24-byte response header; frag_length covers header and stub. */
void	dcerpc_response_hdr_encode(struct wcur *, uint32_t call_id,
	    uint8_t pfc_flags, uint16_t frag_length, uint32_t alloc_hint,
	    uint16_t ctx_id);
void	dcerpc_fault_encode(struct wcur *, uint32_t call_id, uint16_t ctx_id,
	    uint8_t extra_flags, uint32_t status);

#endif
