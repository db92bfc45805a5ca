/*
 * macOS clients: Apple's SMB2 extensions as Samba's vfs_fruit serves them
 * (HACKING.md "macOS clients").  A share whose `vfs objects` names fruit
 * answers the AAPL create context; a connection that sent one gets the
 * Apple behaviours for the rest of its life (directory entries carrying
 * Finder info, zero file ids, ...).  AFP_AfpInfo and AFP_Resource are
 * named streams like any other (xattrs, vfs/xattr.c), with the AfpInfo
 * rules of a Mac: a 60-byte record that is never longer, whose all-zero
 * Finder info deletes it, and that is nothing on disk until written (a
 * create stores nothing: worker/smb2_create_fs.c).
 */
#ifndef USMBD_WORKER_FRUIT_H
#define USMBD_WORKER_FRUIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/aapl.h"
#include "proto/cur.h"
#include "proto/ntstatus.h"

struct conn;
struct tree;
struct file_open;
struct vfs_stat;
struct conf_share;

#define FRUIT_AFPINFO		"AFP_AfpInfo"
#define FRUIT_RESOURCE		"AFP_Resource"

/* Does the tree's share have the Apple extensions on?  1 or 0. */
int		fruit_tree_on(const struct tree *);
/*
 * fruit:encoding = native on this fruit share (Samba's catia mapping
 * that fruit_connect sets): names a Mac sends with U+F001-U+F027 for
 * characters NTFS forbids are stored with those characters, and listed
 * back with U+F0xx (proto/adouble.h adouble_name_native/_private).  1 or 0.
 */
int		fruit_name_native(const struct conf_share *);
/* Has this connection negotiated AAPL on a fruit share?  1 or 0. */
int		fruit_conn_aapl(const struct conn *);

/*
 * Are file ids reported as 0 here?  Once AAPL is negotiated, on a fruit
 * share with fruit:zero_file_id (Samba's default).  1 or 0.
 */
int		fruit_zero_file_id(const struct conn *, const struct tree *);

/*
 * May a directory with open files below be renamed, as on a Mac?  Once
 * AAPL is negotiated, on a share with fruit:posix_rename (Samba's
 * default).  1 or 0.
 */
int		fruit_posix_rename(const struct conn *, const struct tree *);

/*
 * An AAPL context's data on this tree: decoded into q when the share
 * answers it (1), ignored (0: no fruit, `fruit:aapl = no`), or
 * STATUS_INVALID_PARAMETER through *status when malformed.
 */
int		fruit_aapl_want(const struct conn *, const struct tree *,
		    const uint8_t *data, uint32_t len, struct aapl_query *q, ntstatus_t *status);
/*
 * The AAPL reply context appended to a CREATE response (create contexts
 * chained through *prev); the connection is marked as negotiated.
 */
void		fruit_aapl_reply(struct conn *, const struct tree *,
		    const struct aapl_query *, struct wcur *, uint8_t **prev);

/*
 * Is stream name (size bytes) of f's file left out of its stream list?
 * On a fruit share, as Samba's fruit_fstreaminfo: an AfpInfo that is not
 * 60 bytes, an empty AFP_Resource, and once AAPL is negotiated (aapl)
 * any empty stream.  1 or 0.
 */
int		fruit_stream_hidden(const struct file_open *, const char *name,
		    int64_t size, int aapl);
/* Is this stream AFP_AfpInfo (AFP_Resource) of a fruit share?  1 or 0. */
int		fruit_is_afpinfo(const struct file_open *);
int		fruit_is_resource(const struct file_open *);
/*
 * Is a delete-pending stream of f kept at its last close, as a Mac keeps
 * a resource fork that holds data whatever deletes it (delete on close
 * by create or setinfo, with or without data access; smbtorture's
 * "create/setinfo delete-on-close AFP_AfpResource" and empty_stream's
 * T_DOC)?  The delete is still pending while it is open: other opens get
 * DELETE_PENDING.  An empty fork goes.  1 or 0.
 */
int		fruit_rsrc_kept(const struct file_open *);
/*
 * A write to AFP_AfpInfo (the whole stream is a 60-byte record), by a
 * Mac's rules: at least 3 bytes, 60 unless at offset 0, starting "AFP";
 * up to 16 bytes nothing is written; else the first 60 bytes are the
 * record, whatever the offset, and must carry the signature and version
 * (unless fruit:validate_afpinfo = no); an all-zero Finder info removes
 * the stream.  The first such write creates the xattr.  Also the path of
 * a copychunk into AfpInfo.  Returns len, or -errno (-EINVAL for a bad
 * write).
 */
ssize_t		fruit_afpinfo_write(struct file_open *, const void *buf,
		    size_t len, uint64_t off);
/*
 * fruit:metadata = netatalk (Samba's default, and ours): AFP_AfpInfo is
 * not a stream xattr but the Finder info of netatalk's AppleDouble blob
 * (the xattr user.org.netatalk.Metadata, proto/adouble.h), converted to
 * and from the 60-byte record as Samba does.  What an older usmbd stored
 * as the stream xattr user.usmbd.stream.AFP_AfpInfo is still read when
 * the blob is absent (or malformed), and goes at the next write or
 * delete: nothing already on disk is lost by the default's change.
 * Is f such an AfpInfo?  1 or 0.
 */
int		fruit_meta_netatalk(const struct file_open *);
/* Does f's share (a fruit share) keep AfpInfo so?  1 or 0. */
int		fruit_meta_netatalk_share(const struct file_open *);
/*
 * The record of f's file (fruit_meta_netatalk): from the blob, else from
 * the older stream xattr if it holds 60 bytes.  AFPINFO_SIZE, -ENODATA
 * when neither holds one, or -errno.  One getxattr, two when the blob is
 * absent.
 */
ssize_t		fruit_afpinfo_read(const struct file_open *,
		    uint8_t rec[AFPINFO_SIZE]);
/* Removes both: 0 when one was there, -ENODATA when none, or -errno. */
int		fruit_afpinfo_remove(struct file_open *);
/*
 * For a stream list (fruit_meta_netatalk shares): 1 when the blob of
 * f's file lists AFP_AfpInfo (Finder info not all zeros), 0 when a well
 * formed blob does not, -1 when there is no usable blob (an older stream
 * xattr, if any, is listed as itself then).
 */
int		fruit_afpinfo_listed(const struct file_open *);

/*
 * Stores record rec (checked) as f's AfpInfo on fd's file by the share's
 * fruit:metadata (xname: the stream xattr to use, NULL for the usual
 * name); an all-zero Finder info removes it.  0 or -errno.
 */
int		fruit_afpinfo_put(const struct conf_share *, int fd,
		    const char *xname, const uint8_t rec[AFPINFO_SIZE]);
/* A new record as a Mac makes it: signature, version, zeros. */
void		fruit_afpinfo_default(uint8_t rec[AFPINFO_SIZE]);
/* Setting AFP_AfpInfo's end of file: past 60 is refused, else ignored. */
ntstatus_t	fruit_afpinfo_eof(struct file_open *, uint64_t eof);

/*
 * READ_DIR_ATTR: the 24 bytes of a FileIdBothDirectoryInformation entry's
 * short name field (length 24, resource fork size, compressed Finder
 * info) for entry name of directory dirfd.  Two getxattr calls, no
 * allocation; with convert, a Mac's "._" file is converted first
 * (fruit_conv).
 */
void		fruit_dir_attr(const struct conf_share *, int dirfd,
		    const char *name, const struct vfs_stat *st, int convert,
		    uint8_t out[26]);

/*
 * OSX_COPYFILE (fruit:copyfile, once granted): a copychunk of no chunks
 * copies the whole source file, data and named streams, onto dst (data
 * streams both).  0 and the bytes of data copied, or -errno.
 */
int		fruit_copyfile(struct file_open *src, struct file_open *dst,
		    uint64_t *copied);

/*
 * NFS ACEs (fruit:nfs_aces, once AAPL is negotiated on a fruit share),
 * as Samba's fruit_fget_nt_acl / fruit_fset_nt_acl: a DACL queried gets
 * three ACCESS_DENIED ACEs with no rights naming the Unix mode
 * (S-1-5-88-3-mode), owner (S-1-5-88-1-uid) and group (S-1-5-88-2-gid);
 * a DACL set loses every S-1-5-88 ACE, and a mode ACE among them is a
 * chmod (its rwx bits only).  fruit_nfs_take returns 1 and *mode for a
 * chmod, 0 for none; *dacl_left says whether ACEs remain.
 */
struct secdesc;
void		fruit_nfs_add(const struct conn *, const struct tree *,
		    const struct vfs_stat *, struct secdesc *);
int		fruit_nfs_take(const struct conn *, const struct tree *,
		    struct secdesc *, uint32_t *mode, int *dacl_left);

/*
 * Time Machine: the share's size as fruit:time machine max size says,
 * less what its sparse bundles use (bands x band size, Samba's
 * fruit_disk_free).  0 and the totals in 512-byte units, or -1 when the
 * share has no such limit.
 */
int		fruit_tm_size(const struct tree *, uint64_t *total512,
		    uint64_t *free512);

/*
 * fruit:resource = file (Samba's default, and ours; worker/fruit_rsrc.c):
 * AFP_Resource of "dir/NAME" is the resource-fork entry of the
 * AppleDouble file "dir/._NAME" (proto/adouble.h), opened beneath the
 * share root as the user, never through a symlink, never a FIFO or
 * device.  Where no "._" file holds a fork, the older stream xattr
 * user.usmbd.stream.AFP_Resource is read; the next write, truncation or
 * delete moves or removes it.  Is f such a fork?  1 or 0.
 */
int		fruit_rsrc_file(const struct file_open *);
/* "dir/._NAME" for path "dir/NAME": 0 or -errno. */
int		fruit_rsrc_name(const char *path, char *out, size_t cap);
/*
 * 1 when a "._" file's stat is a regular file of one name: a hard link
 * planted under the name would have the user read, write or convert
 * whatever file it names (worker/fruit_rsrc.c says more).
 */
struct vfs_stat;
int		fruit_rsrc_own_inode(const struct vfs_stat *st);
/* The fork's size: >= 0, -ENODATA when there is none, or -errno. */
int64_t		fruit_rsrc_size(const struct file_open *);
/* Bytes read at off (0 past the end), -ENODATA, or -errno. */
ssize_t		fruit_rsrc_pread(const struct file_open *, void *buf,
		    size_t len, uint64_t off);
/* Writes at off: the "._" file made when missing.  len, or -errno. */
ssize_t		fruit_rsrc_pwrite(struct file_open *, const void *buf,
		    size_t len, uint64_t off);
/* The fork's end of file: 0 or -errno. */
int		fruit_rsrc_truncate(struct file_open *, uint64_t len);
/*
 * A create of the stream: the "._" file made when missing (*made), the
 * fork emptied when truncate.  0 or -errno.
 */
int		fruit_rsrc_create(struct file_open *, int truncate, int *made);
/* Removes the "._" file and the older xattr: 0, -ENODATA, or -errno. */
int		fruit_rsrc_remove(struct file_open *);
/*
 * The data file from was renamed to to->path (a file's rename: "._NAME"
 * follows; a directory's: nothing) or removed at path on a share of
 * root: its "._" file follows (goes), as Samba's fruit_rename and
 * fruit_unlink (a failed rename is logged); on a share with a recycle
 * bin it goes into user's bin beside its file, as the data file went
 * (recycle_unlink, whichever worker did the delete).
 * fruit_rsrc_unlinked: 0 or -errno.  Nothing on other shares.
 */
void		fruit_rsrc_rename(const struct conf_share *, int root,
		    const char *from, const struct file_open *to);
int		fruit_rsrc_unlinked(const struct conf_share *, const char *user,
		    int root, const char *path);
/* OSX_COPYFILE: src's fork (if any) becomes dst's.  0 or -errno. */
int		fruit_rsrc_copy(struct file_open *src, struct file_open *dst);
/*
 * READ_DIR_ATTR: the fork size in "._NAME" of directory dirfd; -ENOENT
 * when there is none, -EINVAL when it is not a well formed one.  One
 * openat2 when there is none; open, fstat, pread, close when there is.
 */
int64_t		fruit_rsrc_entsize(int dirfd, const char *name);

/*
 * Samba's ad_convert: the "._" file of path (below directory root) in a
 * Mac's own layout is converted when first met, on an open of
 * AFP_AfpInfo or AFP_Resource and in AAPL listings (worker/fruit_conv.c):
 * each extended attribute of its ATTR block becomes a stream of the
 * file, its Finder info the file's AfpInfo, and it is cut to Samba's
 * layout (the fork at 82), its empty fork wiped and the file deleted as
 * fruit:wipe_intentionally_left_blank_rfork and fruit:delete_empty_adfiles
 * say.  fd: the data file's (or -1: opened here); convert 0 only reads.
 * Returns the fork's size, -ENOENT when there is no "._" file, -EINVAL
 * when it is not a usable one, or -errno.
 */
int64_t		fruit_conv(const struct conf_share *, int root,
		    const char *path, int fd, int convert);

#endif
