CREATE TABLE `git_pack` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`repo_id` integer NOT NULL,
	`catalog_repo_id` integer NOT NULL,
	`objects` integer DEFAULT 0 NOT NULL,
	`size` integer DEFAULT 0 NOT NULL,
	`idx_size` integer DEFAULT 0 NOT NULL,
	`checksum` text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_git_pack_s` ON `git_pack` (`catalog_repo_id`,`id`);--> statement-breakpoint
CREATE INDEX `IDX_git_pack_repo` ON `git_pack` (`repo_id`);--> statement-breakpoint
CREATE TABLE `git_ref` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`name` text NOT NULL,
	`oid` text NOT NULL,
	`peeled` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_git_ref_s` ON `git_ref` (`repo_id`,`name`);--> statement-breakpoint
CREATE TABLE `git_tx` (
	`id` text PRIMARY KEY NOT NULL,
	`ok` integer DEFAULT 0 NOT NULL
);
