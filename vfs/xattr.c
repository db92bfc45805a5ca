/*
 * Windows metadata kept in extended attributes: the DOS attributes and the
 * creation time in one value of our own format (user.usmbd.dos), alternate
 * data streams as user.usmbd.stream.<name>.
 *
 * user.usmbd.dos, little endian:
 *   'U' 'D' version(1) 0 | attrs u32 | create_time u64 (FILETIME, 0 = unset)
 * version 2 (32 bytes, written only when a change time was set) adds
 *   change_time u64 | change_mtime u64
 * version 3 (56 bytes, written only while an open holds a write time) adds
 *   wt_old u64 | wt_fire u64 | wt_owner u64
 */

/*
 * EAs, and file systems without user xattrs.
 *
 * Windows metadata in xattrs (files, vfs/xattr.c, worker/smb2_ea.c).  An
 * EA is the xattr user.usmbd.ea.<NAME>, NAME as the client spelt it
 * (older versions stored it upper-cased; such names are still found).
 * Names compare without case (ASCII): a set in another case replaces the
 * EA under the new spelling, an empty value deletes it, a QUERY_INFO EA
 * list matches without case (NTFS upper-cases names; Samba and usmbd
 * keep them, since the Linux client looks for the spelling it set).  On
 * a file system with no user xattrs (tmpfs before 6.6, ramfs) the DOS
 * xattr cannot be written: CREATE and SET_INFO FileBasicInformation
 * still succeed, the times the kernel keeps are set and the creation
 * time and attributes are dropped, as Samba drops them (one debug line
 * per worker); a write time set through a handle is put back after each
 * later write of that handle (worker/file_wt.c, as no xattr can carry
 * it); EA sets there are STATUS_EAS_NOT_SUPPORTED.  Tests:
 * t/integ/files_ea.sh (a ramfs share).
 */
#include <errno.h>
#include <string.h>

#include "proto/cur.h"
#include "vfs/vfs.h"

#define DOS_VERSION	1
#define DOS_VERSION2	2
#define DOS_VERSION3	3
#define DOS_LEN		16
#define DOS_LEN2	32
#define DOS_LEN3	56

size_t
vfs_dos_encode(const struct vfs_dosinfo *di, uint8_t *buf, size_t len)
{
	int v3 = di->wt_owner != 0;
	int v2 = v3 || di->change_time != 0;
	size_t need = v3 ? DOS_LEN3 : v2 ? DOS_LEN2 : DOS_LEN;

	if (len < need)
		return 0;
	buf[0] = 'U';
	buf[1] = 'D';
	buf[2] = v3 ? DOS_VERSION3 : v2 ? DOS_VERSION2 : DOS_VERSION;
	buf[3] = 0;
	le32_put(buf + 4, di->attrs);
	le64_put(buf + 8, di->create_time);
	if (!v2)
		return need;
	le64_put(buf + 16, di->change_time);
	le64_put(buf + 24, di->change_mtime);
	if (!v3)
		return need;
	le64_put(buf + 32, di->wt_old);
	le64_put(buf + 40, di->wt_fire);
	le64_put(buf + 48, di->wt_owner);
	return need;
}

int
vfs_dos_decode(const uint8_t *buf, size_t len, struct vfs_dosinfo *di)
{
	memset(di, 0, sizeof(*di));
	if (len < DOS_LEN || buf[0] != 'U' || buf[1] != 'D' ||
	    buf[2] < DOS_VERSION || buf[2] > DOS_VERSION3 ||
	    (buf[2] == DOS_VERSION2 && len < DOS_LEN2) ||
	    (buf[2] == DOS_VERSION3 && len < DOS_LEN3))
		return -EINVAL;
	di->attrs = le32_get(buf + 4);
	di->create_time = le64_get(buf + 8);
	if (buf[2] >= DOS_VERSION2) {
		di->change_time = le64_get(buf + 16);
		di->change_mtime = le64_get(buf + 24);
	}
	if (buf[2] == DOS_VERSION3) {
		di->wt_old = le64_get(buf + 32);
		di->wt_fire = le64_get(buf + 40);
		di->wt_owner = le64_get(buf + 48);
	}
	return 0;
}

/* -ENODATA when the file has none (the caller derives defaults). */
int
vfs_dos_get(const struct vfs_ops *ops, int fd, struct vfs_dosinfo *di)
{
	uint8_t buf[64];
	ssize_t n;

	memset(di, 0, sizeof(*di));
	n = ops->getxattr(fd, VFS_XATTR_DOS, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return vfs_dos_decode(buf, (size_t)n, di);
}

int
vfs_dos_set(const struct vfs_ops *ops, int fd, const struct vfs_dosinfo *di)
{
	uint8_t buf[DOS_LEN3];
	size_t n = vfs_dos_encode(di, buf, sizeof(buf));

	return ops->setxattr(fd, VFS_XATTR_DOS, buf, n, 0);
}

int
vfs_stream_xattr_name(const char *stream, char *out, size_t len)
{
	size_t pl = strlen(VFS_XATTR_STREAM), sl = strlen(stream);

	/*
	 * The xattr name is one flat string, so "/" or ".." cannot walk
	 * anywhere; they are refused anyway so that a name never looks like
	 * a path to whoever reads the logs or copies the file.
	 */
	if (sl == 0 || strchr(stream, '/') != NULL ||
	    strchr(stream, '\\') != NULL || strstr(stream, "..") != NULL)
		return -EINVAL;
	if (pl + sl + 1 > len || pl + sl > 255)	/* XATTR_NAME_MAX */
		return -ENAMETOOLONG;
	memcpy(out, VFS_XATTR_STREAM, pl);
	memcpy(out + pl, stream, sl + 1);
	return 0;
}
