/*
 * Payloads of MSG_AUTH_REQ and MSG_AUTH_REP (daemon/msg.h).
 *
 * A gate or worker that received an NTLMSSP AUTHENTICATE sends the three
 * NTLMSSP messages of the exchange (NEGOTIATE and CHALLENGE as they went on
 * the wire, for the MIC) to the master; the master checks the NTLMv2 response
 * against the passdb and answers with the verdict, the exported session key
 * and the Unix identity.  The master keeps each successful verdict it gives
 * a gate under the id of the MSG_AUTH_REQ it answers (daemon/route.h); a
 * MSG_HANDOFF names that id and is routed by that verdict, used once, never
 * by what the gate claims.
 */
#ifndef USMBD_DAEMON_AUTHMSG_H
#define USMBD_DAEMON_AUTHMSG_H

#include <stddef.h>
#include <stdint.h>

#define AUTH_FLAG_GUEST		0x1
#define AUTH_FLAG_ANONYMOUS	0x2
/*
 * In a MSG_AUTH_REP to a worker: the verdict is another user's (a second
 * user on that worker's connection).  The session key is withheld; the
 * worker may ask the master to relay the session to a worker of that
 * user (MSG_RELAY, HACKING.md "Several users on one connection").
 */
#define AUTH_FLAG_RELAY		0x4

#define AUTH_NAME_MAX		64

/*
 * What an authmsg_req carries (its mech).  NTLMSSP: the three messages.
 * Kerberos: the SPNEGO mechToken (a GSS-API krb5 AP-REQ) as `authenticate`,
 * negotiate and challenge empty; the master hands it to the ticket helper
 * unread (HACKING.md "Kerberos logons").
 */
#define AUTHMSG_MECH_NTLMSSP	0
#define AUTHMSG_MECH_KRB5	1
/*
 * Kerberos chosen after another mechanism (RFC 4178 5, HACKING.md
 * "Kerberos logons"): the AP-REQ's request (AUTHMSG_MECH_KRB5) also
 * carries the client's DER mechTypes, which the helper signs and checks
 * the client's mechListMIC over; when that MIC was not with the AP-REQ,
 * the answer is STATUS_MORE_PROCESSING_REQUIRED with the AP-REP, our
 * MIC and krb_ctx naming the helper's context, and the client's MIC
 * comes in a request of its own (AUTHMSG_MECH_KRB5_MIC: `authenticate`
 * is the MIC, krb_ctx that context) whose answer is the verdict.
 */
#define AUTHMSG_MECH_KRB5_MIC	2
/* The mechanism's answer in a verdict (the AP-REP), at most this long. */
#define AUTH_MECH_OUT_MAX	512
#define AUTH_FULL_KEY_MAX	32
#define AUTH_MIC_MAX		64	/* a GSS MIC token: 28 to 40 bytes */
#define AUTH_MECH_TYPES_MAX	256	/* the DER mechTypes a MIC covers */

struct authmsg_req {
	char		 client[64];		/* peer address, for logs and throttling */
	const uint8_t	*negotiate;		/* views into the message buffer */
	uint32_t	 negotiate_len;
	const uint8_t	*challenge;
	uint32_t	 challenge_len;
	const uint8_t	*authenticate;
	uint32_t	 authenticate_len;
	uint32_t	 mech;			/* AUTHMSG_MECH_* */
	/* Kerberos after another mechanism (AUTHMSG_MECH_KRB5_MIC above). */
	const uint8_t	*mech_types;		/* DER MechTypeList, or empty */
	uint32_t	 mech_types_len;
	const uint8_t	*mic;			/* the client's mechListMIC, or empty */
	uint32_t	 mic_len;
	uint64_t	 krb_ctx;		/* AUTHMSG_MECH_KRB5_MIC: the context */
};

struct authmsg_rep {
	uint32_t	 status;		/* NTSTATUS */
	uint32_t	 flags;			/* AUTH_FLAG_* */
	uint8_t		 session_key[16];	/* exported session key (anonymous: MS-NLMP 3.3.1) */
	uint32_t	 uid;
	uint32_t	 gid;
	char		 user[AUTH_NAME_MAX];	/* Unix account, "" for anonymous */
	char		 domain[AUTH_NAME_MAX];	/* as the client sent it, UTF-8 */
	/*
	 * Kerberos: seconds the ticket has left (the session expires then,
	 * MS-SMB2 3.3.5.5.3); 0 = no end (NTLM).  mech_out: the AP-REP
	 * for the client (mutual authentication), empty for NTLM.
	 */
	uint32_t	 lifetime;
	uint32_t	 mech_out_len;
	uint8_t		 mech_out[AUTH_MECH_OUT_MAX];
	/*
	 * Kerberos: the whole session key when longer than 16 bytes
	 * (MS-SMB2 Session.FullSessionKey, for the AES-256 ciphers of 3.1.1);
	 * 0 = session_key is all of it.  Withheld with session_key.
	 */
	uint32_t	 full_key_len;
	uint8_t		 full_key[AUTH_FULL_KEY_MAX];
	/*
	 * Kerberos after another mechanism: our mechListMIC, and with
	 * STATUS_MORE_PROCESSING_REQUIRED the helper's context waiting for
	 * the client's MIC (AUTHMSG_MECH_KRB5_MIC above).
	 */
	uint64_t	 krb_ctx;
	uint32_t	 mic_len;
	uint8_t		 mic[AUTH_MIC_MAX];
};

/*
 * The identity the master vouches for, at the head of every MSG_CONN
 * payload (the connection state after it, as the gate sent it): a worker
 * serves a handed-off session as this, never as the gate said.  kind
 * AUTHMSG_IDENT_NONE for a binding hand-off (no session comes with it).
 * Fixed length, AUTHMSG_IDENT_LEN.
 */
#define AUTHMSG_IDENT_NONE	0
#define AUTHMSG_IDENT_LOGIN	1
/*
 * A relayed session (MSG_RELAY): the identity, then the master's whole
 * verdict (u32 length + authmsg_rep_encode: the session key, and for
 * Kerberos the whole key, the ticket's lifetime, the AP-REP and the
 * helper's mechListMIC), which only this worker, of the verdict's uid,
 * ever receives; then the owner's payload.  AUTHMSG_REP_MAX bounds an
 * encoded authmsg_rep.
 */
#define AUTHMSG_IDENT_RELAY	2
#define AUTHMSG_REP_MAX		1024
/*
 * peer: the client's address as the master read it with getpeername(2) of
 * the connection's own TCP socket (a hand-off's, or for a relayed session
 * the owner's socket it was shown, MSG_RELAY_PEER), in the text
 * conf_peer_allowed judges; "" when the master could not read one.  What
 * a worker judges `hosts allow` / `hosts deny` by when it does not hold
 * that socket itself (worker/smb2_tree.c).
 */
#define AUTHMSG_PEER_MAX	48
#define AUTHMSG_IDENT_LEN	(16 + AUTH_NAME_MAX + AUTHMSG_PEER_MAX)

struct authmsg_ident {
	uint32_t	 kind;
	uint32_t	 uid;
	uint32_t	 gid;
	uint32_t	 flags;			/* AUTH_FLAG_* */
	char		 user[AUTH_NAME_MAX];	/* "" for anonymous */
	char		 peer[AUTHMSG_PEER_MAX];
};

/* Encoders return the payload length, or -EMSGSIZE. Decoders 0 or -EBADMSG. */
int	authmsg_req_encode(const struct authmsg_req *, uint8_t *buf, size_t cap);
int	authmsg_req_decode(struct authmsg_req *, const uint8_t *p, size_t len);
int	authmsg_rep_encode(const struct authmsg_rep *, uint8_t *buf, size_t cap);
int	authmsg_rep_decode(struct authmsg_rep *, const uint8_t *p, size_t len);
/* Exactly AUTHMSG_IDENT_LEN bytes; decode reads the first that many of p. */
int	authmsg_ident_encode(const struct authmsg_ident *, uint8_t *buf, size_t cap);
int	authmsg_ident_decode(struct authmsg_ident *, const uint8_t *p, size_t len);

#endif
