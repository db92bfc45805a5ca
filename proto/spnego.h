/*
 * SPNEGO (RFC 4178, MS-SPNG) as used in SMB2 SESSION_SETUP security buffers,
 * for NTLMSSP and Kerberos 5 (whose tokens are only recognised here: the
 * ticket helper's GSSAPI library reads them).
 *
 * The client's token is one of: a raw NTLMSSP message ("NTLMSSP\0" prefix);
 * a GSS-API InitialContextToken ([APPLICATION 0] with the SPNEGO OID
 * 1.3.6.1.5.5.2) wrapping negTokenInit [0]; a bare negTokenInit [0]; or a
 * negTokenResp [1].  The decoder returns views into the caller's buffer.
 */
#ifndef USMBD_PROTO_SPNEGO_H
#define USMBD_PROTO_SPNEGO_H

#include <stddef.h>
#include <stdint.h>

enum spnego_kind {
	SPNEGO_RAW_NTLMSSP = 1,	/* mech_token is the whole buffer */
	SPNEGO_NEG_INIT = 2,
	SPNEGO_NEG_RESP = 3,
};

/* negState (RFC 4178 4.2.2) */
#define SPNEGO_ACCEPT_COMPLETED		0
#define SPNEGO_ACCEPT_INCOMPLETE	1
#define SPNEGO_REJECT			2
#define SPNEGO_REQUEST_MIC		3

#define SPNEGO_MAX_MECH_TYPES		32

/* Mechanisms, for supportedMech (spnego_build_resp) and krb5_preferred. */
#define SPNEGO_MECH_NTLMSSP		1	/* 1.3.6.1.4.1.311.2.2.10 */
#define SPNEGO_MECH_KRB5		2	/* 1.2.840.113554.1.2.2 */
#define SPNEGO_MECH_KRB5_MS		3	/* 1.2.840.48018.1.2.2 */

/* GSS-API krb5 token ids (RFC 1964 1.1, RFC 4121 4.1) */
#define SPNEGO_KRB5_AP_REQ		0x0100
#define SPNEGO_KRB5_AP_REP		0x0200

struct spnego_token {
	int		 kind;			/* enum spnego_kind */
	/* negTokenInit */
	const uint8_t	*mech_types;		/* DER of MechTypeList (SEQUENCE
						 * tag and length included): what
						 * the mechListMIC covers */
	size_t		 mech_types_len;
	int		 n_mech_types;
	int		 ntlmssp_offered;	/* NTLMSSP OID in mechTypes */
	int		 ntlmssp_preferred;	/* ... and it is the first one,
						 * so mech_token is NTLMSSP's */
	int		 krb5_offered;		/* a Kerberos 5 OID in mechTypes */
	int		 krb5_preferred;	/* the first one is Kerberos 5:
						 * SPNEGO_MECH_KRB5(_MS), else 0 */
	/*
	 * Where each mechanism first comes in mechTypes (1 + its index, 0
	 * absent), so the acceptor can take the client's first one it
	 * supports when that is not the first listed (Windows lists NegoEx
	 * first); krb5_mech is the spelling of that first Kerberos OID.
	 */
	int		 krb5_pos;
	int		 krb5_mech;
	int		 ntlmssp_pos;
	/* both */
	const uint8_t	*mech_token;		/* mechToken / responseToken */
	size_t		 mech_token_len;
	const uint8_t	*mech_list_mic;
	size_t		 mech_list_mic_len;
	/* negTokenResp */
	int		 neg_state;		/* -1 when absent */
	int		 supported_mech_ntlmssp; /* -1 absent, 0 other, 1 NTLMSSP */
};

/* 0, or -EBADMSG for anything malformed, truncated or not SPNEGO. */
int	spnego_decode(const uint8_t *buf, size_t len, struct spnego_token *out);

/*
 * The NEGOTIATE response's security buffer: an InitialContextToken with a
 * negTokenInit listing NTLMSSP (1.3.6.1.4.1.311.2.2.10) and the negHints
 * "not_defined_in_RFC4178@please_ignore" that Windows and Samba send.
 * Returns the length, or -EMSGSIZE.
 */
int	spnego_build_neg_hints(uint8_t *buf, size_t cap);

/*
 * The same, listing Kerberos 5 (Microsoft's OID, then the standard one)
 * before NTLMSSP when with_krb5: a server with a keytab.
 */
int	spnego_build_neg_init(uint8_t *buf, size_t cap, int with_krb5);

/*
 * Is buf a Kerberos 5 GSS-API token (RFC 2743 3.1 framing with either krb5
 * OID)?  1 and *tok_id (SPNEGO_KRB5_AP_REQ...) when tok_id is not NULL,
 * else 0.  Only the framing is read.
 */
int	spnego_krb5_token(const uint8_t *buf, size_t len, uint16_t *tok_id);

/*
 * A negTokenResp: negState (SPNEGO_ACCEPT_*), supportedMech
 * with_supported_mech (SPNEGO_MECH_*: NTLMSSP is 1; 0 for none) in the
 * first reply, responseToken and mechListMIC when
 * their length is non-zero.  Returns the length, or -EMSGSIZE / -EINVAL.
 */
int	spnego_build_resp(uint8_t *buf, size_t cap, int neg_state,
	    int with_supported_mech, const uint8_t *resp_token,
	    size_t resp_len, const uint8_t *mic, size_t mic_len);

#endif
