/*
 * A watch's queue of changes (worker/notify_priv.h): the share's filters
 * (veto files, hide unreadable) on the way in, FILE_NOTIFY_INFORMATION on
 * the way out.
 */
#include "worker/notify_priv.h"

#include <string.h>

#include "daemon/conf.h"
#include "proto/cur.h"
#include "proto/fscc.h"
#include "worker/smb2.h"
#include "worker/smb2_file.h"

void
notify_queue(struct notify_watch *w, uint32_t action, const char *name,
    const char *judge)
{
	size_t n = strlen(name);
	int vis;

	if (w->overflow)
		return;
	if (w->share != NULL && w->share->veto_pat != NULL &&
	    conf_namepat_path(w->share->veto_pat, name,
	    w->share->case_sensitive) != 0)
		return;
	if (w->share != NULL && w->share->hide_unreadable &&
	    (vis = smb2_dir_notify_visible(w->conn, w->fid_p, w->fid_v,
	    action, name, judge)) <= 0) {
		if (vis < 0) {		/* gone: the client lists again */
			w->overflow = 1;
			w->qlen = 0;
		}
		return;
	}
	/*
	 * The same change twice in a row is one (Samba coalesces identical
	 * records too): a write and the close after it are one MODIFIED
	 * (smb2.notify.valid-req counts them).
	 */
	if (w->qlen > 0 && le32_get(w->q + w->qlast) == action &&
	    ((size_t)w->q[w->qlast + 4] | (size_t)w->q[w->qlast + 5] << 8) ==
	    n && memcmp(w->q + w->qlast + 6, name, n) == 0)
		return;
	if (n > 0xFFFF || w->qlen + 6 + n > sizeof(w->q)) {
		w->overflow = 1;
		w->qlen = 0;
		return;
	}
	w->qlast = w->qlen;
	le32_put(w->q + w->qlen, action);
	w->q[w->qlen + 4] = (uint8_t)(n & 0xFF);
	w->q[w->qlen + 5] = (uint8_t)(n >> 8);
	memcpy(w->q + w->qlen + 6, name, n);
	w->qlen += 6 + n;
}
ntstatus_t
notify_answer(struct notify_watch *w, struct smb2_rsp *rsp, uint32_t outlen)
{
	uint8_t *hdr;
	size_t body_start;

	/* MS-SMB2 2.2.36 */
	hdr = rsp->body.p;
	wcur_le16(&rsp->body, 9);
	wcur_le16(&rsp->body, SMB2_HDR_LEN + 8);
	wcur_le32(&rsp->body, 0);
	body_start = wcur_off(&rsp->body);
	if (fscc_notify_encode(w->q, w->qlen, &rsp->body, outlen < w->bufsize ?
	    outlen : w->bufsize, w->native) != 0) {
		/* does not fit the client's buffer: it must enumerate */
		w->qlen = 0;
		rsp->body.p = hdr;
		rsp->body.err = 0;
		return STATUS_NOTIFY_ENUM_DIR;
	}
	le32_put(hdr + 4, (uint32_t)(wcur_off(&rsp->body) - body_start));
	w->qlen = 0;
	return STATUS_SUCCESS;}
