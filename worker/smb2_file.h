/*
 * The file command handlers for trees that are not IPC$ (the SMB2 core's
 * dispatch calls these).  Each reads req->body from the start of its
 * request body and writes rsp->body; see worker/smb2.h.
 */
#ifndef USMBD_WORKER_SMB2_FILE_H
#define USMBD_WORKER_SMB2_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/ntstatus.h"

struct smb2_req;
struct smb2_rsp;

ntstatus_t	smb2_create_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_close_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_read_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_write_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_flush_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_query_directory_handle(struct smb2_req *, struct smb2_rsp *);
/*
 * hide unreadable for CHANGE_NOTIFY: 1 when a listing would show every
 * component of rel's first len bytes (a name below the open directory
 * d; a "file:stream" is judged by its file's part), 0 otherwise.
 */
struct tree;
struct file_open;
int		smb2_dir_path_readable(struct tree *, const struct file_open *d,
		    const char *rel, size_t len);
/*
 * The same for a CHANGE_NOTIFY of the open (fid_p, fid_v): 1 shown, 0
 * left out, -1 a name that is gone (removed, or moved where the watch
 * does not see; judge: its new name, or NULL), which cannot be judged.
 * Only a *_STREAM action's name holds a stream, after its last ':'
 * (proto/fscc.h fscc_notify_file_len).
 */
struct conn;
int		smb2_dir_notify_visible(struct conn *, uint64_t fid_p,
		    uint64_t fid_v, uint32_t action, const char *name,
		    const char *judge);
ntstatus_t	smb2_query_info_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_set_info_handle(struct smb2_req *, struct smb2_rsp *);
/*
 * worker/smb2_secdesc.c: the security descriptor of an open, stored whole
 * or derived from owner, group, mode and POSIX ACLs.  query writes the SD parts of
 * which (SECURITY_INFORMATION) and sets *need to its full length; it
 * returns STATUS_BUFFER_TOO_SMALL when w has not room for it.
 */
struct open;
struct wcur;
ntstatus_t	smb2_secdesc_query(struct open *, uint32_t which, struct wcur *w,
		    uint32_t *need);
ntstatus_t	smb2_secdesc_set(struct open *, uint32_t which,
		    const uint8_t *buf, size_t len);
/*
 * What a CREATE that made f stores (MS-DTYP 2.5.3.4): its parent's
 * inheritable entries and the SecD context's parts (secd, NULL when
 * none); nothing when neither gives a DACL.
 */
struct conn;
struct tree;
struct file_open;
ntstatus_t	smb2_secdesc_create(struct conn *, struct tree *,
		    struct file_open *, const uint8_t *secd, size_t secd_len);
/*
 * The NT lock of an open of an existing file (a stored descriptor must
 * grant named; *want and *maxacc narrow to what it grants).  st is fd's
 * fresh stat.  No system call on a share where no descriptor was ever
 * stored, nor for a file this worker found without one at the same ctime.
 */
struct vfs_stat;
ntstatus_t	smb2_secdesc_check(struct tree *, const char *path, int fd,
		    const struct vfs_stat *st, uint32_t named, uint32_t *want,
		    uint32_t *maxacc);
/*
 * SeSecurityPrivilege: 1 for a member of `server admin group`.  privilege
 * answers a CREATE's DesiredAccess: PRIVILEGE_NOT_HELD when it names
 * ACCESS_SYSTEM_SECURITY without the privilege.
 */
struct conf;
int		smb2_secdesc_privileged(const struct conf *);
ntstatus_t	smb2_secdesc_privilege(const struct conf *, uint32_t access);
/*
 * hide unreadable: 1 when the stored descriptor of entry name of dirfd (st
 * its stat), if any, lets the caller read it (FILE_READ_DATA, or
 * FILE_LIST_DIRECTORY), as an open would judge it; else 0.
 */
int		smb2_secdesc_entry_readable(struct tree *, int dirfd,
		    const char *name, const struct vfs_stat *st);
/* A create of path: the parent's stored descriptor must let it add. */
ntstatus_t	smb2_secdesc_parent(struct tree *, const char *path,
		    int is_dir);
/* 1 when share of t has stored descriptors (looked at <= once a second). */
int		smb2_secdesc_tree_stored(struct tree *);
/* The stored descriptor of fd: 1, 0 when none, or -errno. */
struct secdesc;
int		smb2_secdesc_stored(int fd, struct secdesc *);
/*
 * worker/smb2_ea.c: extended attributes (FILE_FULL_EA_INFORMATION), names
 * kept as written and compared without case.  query writes every EA
 * (STATUS_NO_EAS_ON_FILE when none, BUFFER_OVERFLOW when only some fit);
 * set applies a chain (an empty value deletes); size is the EaSize of
 * FileEaInformation.
 */
struct file_open;
ntstatus_t	smb2_ea_query(struct file_open *, struct wcur *w);
/*
 * The same, or only the EAs a FILE_GET_EA_INFORMATION list names (list
 * non-NULL, list_len > 0: the QUERY_INFO input buffer); on
 * BUFFER_TOO_SMALL *need is the size of the first entry.
 */
ntstatus_t	smb2_ea_query_need(struct file_open *, const uint8_t *list,
		    size_t list_len, struct wcur *w, uint32_t *need);
ntstatus_t	smb2_ea_set(struct file_open *, const uint8_t *buf, size_t len);
uint32_t	smb2_ea_size(struct file_open *);
/*
 * EaSize from a file's xattr names (list[0, n) as listxattr gives them),
 * vsize(arg, xname) giving one value's size: what smb2_ea_size answers,
 * shared with the listings (worker/smb2_dir.c).  smb2_ea_on: EAs served
 * on the share (`ea support`, default yes); off, a file has none and sets
 * are refused.
 */
uint32_t	smb2_ea_size_names(const char *list, size_t n,
		    ssize_t (*vsize)(void *, const char *), void *arg);
struct conf_share;
int		smb2_ea_on(const struct conf_share *);
/* FSCTLs on files; req->body is positioned at the IOCTL request fields. */
ntstatus_t	smb2_ioctl_file(struct smb2_req *, struct smb2_rsp *);

#endif
