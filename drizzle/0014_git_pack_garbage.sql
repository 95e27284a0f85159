CREATE TABLE `git_pack_garbage` (
	`repo_id` integer NOT NULL,
	`pack_id` text NOT NULL,
	`removed_unix` integer DEFAULT (unixepoch()) NOT NULL,
	PRIMARY KEY(`repo_id`, `pack_id`)
);
--> statement-breakpoint
CREATE INDEX `IDX_git_pack_garbage_removed` ON `git_pack_garbage` (`removed_unix`);