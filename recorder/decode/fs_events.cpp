#include "recorder/decode/fs_events.h"

#include "record.h"

namespace ezio::recorder {

std::string_view fs_op_name(uint16_t op) {
  static constexpr std::string_view names[EZIO_FS_OP_COUNT] = {
      "",
      "ext4_file_read_iter",
      "ext4_file_write_iter",
      "ext4_sync_file",
      "xfs_file_read_iter",
      "xfs_file_write_iter",
      "xfs_file_fsync",
      "btrfs_file_read_iter",
      "btrfs_file_write_iter",
      "btrfs_sync_file",
      "ext4_da_write_begin",
      "ext4_write_begin",
      "ext4_sync_file",  // ext4_sync_file_enter/exit pair: the function's duration
      "xfs_file_buffered_read",
      "xfs_file_buffered_write",
      "xfs_file_direct_read",
      "xfs_file_direct_write",
      "xfs_file_fsync",
      "iomap_dio_read",  // iomap_dio_rw_begin of a read (bpf/record.h)
      "btrfs_sync_file",
      "iomap_dio_write",  // iomap_dio_rw_begin of a write
  };
  return op < EZIO_FS_OP_COUNT ? names[op] : std::string_view();
}

bool fs_op_reads(uint16_t op) {
  switch (op) {
    case EZIO_FS_EXT4_FILE_READ_ITER:
    case EZIO_FS_XFS_FILE_READ_ITER:
    case EZIO_FS_BTRFS_FILE_READ_ITER:
    case EZIO_FS_TP_XFS_FILE_BUFFERED_READ:
    case EZIO_FS_TP_XFS_FILE_DIRECT_READ:
    case EZIO_FS_TP_IOMAP_DIO_READ:
      return true;
    default:
      return false;
  }
}

bool fs_op_writes(uint16_t op) {
  switch (op) {
    case EZIO_FS_EXT4_FILE_WRITE_ITER:
    case EZIO_FS_XFS_FILE_WRITE_ITER:
    case EZIO_FS_BTRFS_FILE_WRITE_ITER:
    case EZIO_FS_TP_EXT4_DA_WRITE_BEGIN:
    case EZIO_FS_TP_EXT4_WRITE_BEGIN:
    case EZIO_FS_TP_XFS_FILE_BUFFERED_WRITE:
    case EZIO_FS_TP_XFS_FILE_DIRECT_WRITE:
    case EZIO_FS_TP_IOMAP_DIO_WRITE:
      return true;
    default:
      return false;
  }
}

}  // namespace ezio::recorder
