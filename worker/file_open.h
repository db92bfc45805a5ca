/*
 * The per-open state of a file or directory (struct open.u.file), and the
 * helpers the file command handlers share: name parsing, handle lookup and
 * the FSCC view of a file.  Records come from a free list that grows in
 * chunks and is never freed, so the request path does not allocate once
 * warm.
 */
#ifndef USMBD_WORKER_FILE_OPEN_H
#define USMBD_WORKER_FILE_OPEN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/fscc.h"
#include "proto/ntstatus.h"
#include "vfs/vfs.h"

struct smb2_req;
struct open;
struct tree;

#define FILE_PATH_MAX		4096
#define FILE_STREAM_MAX		256
#define FILE_PATTERN_MAX	1024
#define FILE_DIRBUF_LEN		(64u * 1024)

/* MS-SMB2 2.2.13 access mask bits */
#define FILE_READ_DATA		0x00000001u
#define FILE_WRITE_DATA		0x00000002u
#define FILE_APPEND_DATA	0x00000004u
#define FILE_READ_EA		0x00000008u
#define FILE_WRITE_EA		0x00000010u
#define FILE_EXECUTE		0x00000020u
#define FILE_DELETE_CHILD	0x00000040u
#define FILE_READ_ATTRIBUTES	0x00000080u
#define FILE_WRITE_ATTRIBUTES	0x00000100u
#define DELETE_ACCESS		0x00010000u
#define READ_CONTROL		0x00020000u
#define WRITE_DAC		0x00040000u
#define WRITE_OWNER		0x00080000u
#define SYNCHRONIZE		0x00100000u
#define ACCESS_SYSTEM_SECURITY	0x01000000u
#define MAXIMUM_ALLOWED		0x02000000u
#define GENERIC_ALL		0x10000000u
#define GENERIC_EXECUTE		0x20000000u
#define GENERIC_WRITE		0x40000000u
#define GENERIC_READ		0x80000000u
#define FILE_ALL_ACCESS		0x001F01FFu

/* The state of a directory listing (QUERY_DIRECTORY). */
struct file_dir {
	uint8_t		 buf[FILE_DIRBUF_LEN];	/* getdents64 records */
	size_t		 len;
	size_t		 pos;
	int		 started;	/* a search has begun */
	int		 eof;		/* getdents returned 0 */
	int		 dots;		/* 0: "." next, 1: ".." next, 2: done */
	int		 returned;	/* entries returned since the restart */
	int		 searches;	/* requests since the restart */
	char		 pattern[FILE_PATTERN_MAX];
	size_t		 pattern_len;
	struct file_dir	*next_free;
};

struct file_open {
	int		 fd;		/* the data fd; O_PATH when no data access */
	int		 is_dir;
	int		 readable;	/* fd opened for reading */
	int		 writable;	/* fd opened for writing */
	int		 posix;		/* opened with the POSIX create context */
	uint64_t	 dev;
	uint64_t	 ino;
	/* the delayed write-time update of this open (worker/file_wt.c) */
	uint8_t		 wt_state;
	uint8_t		 wt_dirty;	/* written since the update took effect */
	uint64_t	 wt_fire;	/* FILETIME the pending update takes effect */
	uint64_t	 wt_sticky;	/* FILETIME a client fixed on this handle */
	uint8_t		 modified;	/* written: its close breaks dir leases */
	/*
	 * A previous version's open (TWrp): path is "snapdir/@GMT-.../NAME"
	 * and name queries answer the client's own NAME, its last
	 * client_len bytes (a rename of a directory above, by whoever,
	 * changes only what comes before it).
	 */
	uint8_t		 prev_version;
	uint16_t	 client_len;
	char		 path[FILE_PATH_MAX];	/* UTF-8, '/'-separated, "" = root */
	char		 stream[FILE_STREAM_MAX];/* "" = the unnamed data stream */
	uint32_t	 create_options;
	uint32_t	 share_access;
	int		 delete_on_close;
	uint64_t	 position;	/* FilePositionInformation */
	uint32_t	 mode;		/* FileModeInformation */
	struct file_dir	*dir;		/* directories, allocated on first search */
	const void	*share;		/* the share (conf) the path is relative to */
	int		 root_fd;	/* its tree's root fd (fruit "._" files) */
	struct file_open *next_free;
	/* every record in use, for the open-handle rules of renames */
	struct file_open *live_prev;
	struct file_open *live_next;
};

const struct vfs_ops	*file_vfs(void);
/* The name the client knows f by (path, but a previous version's NAME). */
const char		*file_open_client_path(const struct file_open *f);
/* Is path (of share) open in this worker? */
int			file_open_named(const void *share, const char *path);
/*
 * Is anything below directory path (of share) open in this worker, other
 * than the open `self`?  MS-FSA 2.1.5.14.11: such a directory may not be
 * renamed (worker/state_rename.c).  Opens in other workers are not seen
 * (the shared open records carry no path).
 */
int			file_open_busy_below(const void *share, const char *path,
			    const struct file_open *self);
/* The next of them after prev (NULL: the first), or NULL. */
const struct file_open	*file_open_next_below(const void *share,
			    const char *path, const struct file_open *self,
			    const struct file_open *prev);

/*
 * After self's file was renamed from path `from` to self->path: this
 * worker's other handles opened by that same name follow it.
 */
void			 file_open_renamed(const struct file_open *self,
			    const char *from);
int			 file_open_path_current(int root_fd,
			    struct file_open *, const struct vfs_stat *);
struct file_open	*file_open_get(void);
void			 file_open_put(struct file_open *);
struct file_dir		*file_dir_get(void);

/*
 * Decodes a client name (UTF-16LE, '\'-separated, relative to the share)
 * into a vfs path and an optional stream name.  Refuses "..", ".", empty
 * components, leading separators, wildcard and reserved characters, and
 * malformed stream syntax, each with the status Windows gives, and logs
 * the refusals that look like escape attempts.
 */
ntstatus_t	file_name_parse(struct smb2_req *, const uint8_t *name16,
		    size_t len, char *path, size_t cap, char *stream,
		    size_t scap);
/*
 * The same for the target of a rename or a hard link (SET_INFO), which
 * is never a DFS path: SMB2_FLAGS_DFS_OPERATIONS takes no prefix off.
 */
ntstatus_t	file_name_parse_target(struct smb2_req *, const uint8_t *name16,
		    size_t len, char *path, size_t cap, char *stream,
		    size_t scap);
/*
 * The same with the POSIX pathname rules of a POSIX handle: no streams
 * (':' is a name character), no Windows-reserved characters; "." and
 * ".." components and absolute names are still refused.
 */
ntstatus_t	file_name_parse_posix(struct smb2_req *, const uint8_t *name16,
		    size_t len, char *path, size_t cap, char *stream,
		    size_t scap);
/* The open for the request's FileId (related compounds included). */
ntstatus_t	file_open_lookup(struct smb2_req *, struct cur *c,
		    struct open **out);
/* Fills fi from the open's fd and its DOS xattr. */
ntstatus_t	file_info_fill(struct file_open *, struct fscc_info *);
/* Same for a name relative to a directory fd (listings). */
int		file_info_from_stat(const struct vfs_stat *,
		    const struct vfs_dosinfo *, int has_dos,
		    struct fscc_info *);
/*
 * Notes that the DOS xattr of f could not be written because its file
 * system keeps no user xattrs (-EOPNOTSUPP): what it would have held is
 * dropped, as Samba drops it.  Logged once per worker, at debug level: a
 * share on such a file system says so on every set.
 */
void		file_dos_unstorable(const struct file_open *f);
/* Does the client name end in "::$DATA" (the unnamed stream, explicitly)? */
int		file_name_data_suffix(const uint8_t *name16, size_t len);
/*
 * Stream names compare without case (as on NTFS): when f->stream has no
 * exact match among the file's streams, takes the spelling of the one that
 * matches ignoring case.  1 when it changed, 0 otherwise.
 */
int		file_stream_resolve(struct file_open *);
/* Reads / writes len bytes of the open's named stream at off; -errno. */
ssize_t		file_stream_pread(struct file_open *, void *buf, size_t len,
		    uint64_t off);
ssize_t		file_stream_pwrite(struct file_open *, const void *buf,
		    size_t len, uint64_t off);
/* The size of a stream (xattr) of the open, or -errno. */
int64_t		file_stream_size(struct file_open *);

#endif
