// How a run's files land in its directory, apart from what they hold (writer.hpp): the check
// that --out holds no earlier results, files written whole or not at all (flushed to the
// disk, then renamed into place), and which files of a directory chens wrote, so that
// --force removes those and nothing of the user's.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace chens {

// Names of the files a run writes into DIR (states.h5 and periodogram.csv when asked for).
inline const char* const output_files[] = {"summary.json", "series.csv", "trajectory.csv", "periodogram.csv", "states.h5"};

// Throws std::runtime_error when DIR holds results of an earlier run and !force.
void check_output_dir(const std::string& dir, bool force);
// Writes text to path through a temporary file in the same directory, flushed to the disk,
// then a rename: the file is either the old one or complete. Throws std::runtime_error
// "cannot write PATH: <why>" (a full disk: "No space left on device"), the temporary removed.
void write_file_atomically(const std::string& path, const std::string& text);
// `--force` (docs/checkpoints.md): removes what an earlier run or study wrote into dir — in
// dir and in each run directory its study.json lists: study.json, comparison.csv,
// series_long.csv, a run's output files, checkpoint.chk, resume.json, the figures and
// summary.txt chens plot wrote into plots/, and temporary files of a killed process — and
// nothing else; a directory left empty goes too. Returns the paths, relative to dir, of
// what is left at any depth (files, and empty directories with a trailing /; "..." when
// the walk stopped after 4096 entries). Throws when study.json cannot be read (its run
// directories cannot be told from others).
std::vector<std::string> remove_earlier_results(const std::string& dir);

// Writes bytes to path (created or truncated), flushed to the disk: write(2) and fsync(2)
// and close(2) checked, because a full disk or a quota can show first at any of them (NFS
// reports at close). On failure the file is removed and the message names `shown`, the
// file the user asked for, not the temporary name it is written under.
void write_file_checked(const std::filesystem::path& path, const std::string& bytes, const std::string& shown);

}  // namespace chens
