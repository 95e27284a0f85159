CREATE TABLE `action` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`op_type` integer NOT NULL,
	`act_user_id` integer NOT NULL,
	`repo_id` integer NOT NULL,
	`comment_id` integer DEFAULT 0 NOT NULL,
	`ref_name` text DEFAULT '' NOT NULL,
	`is_private` integer DEFAULT false NOT NULL,
	`content` text DEFAULT '' NOT NULL,
	`created_unix` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `IDX_action_user_id` ON `action` (`user_id`,`created_unix`);--> statement-breakpoint
CREATE INDEX `IDX_action_repo_id` ON `action` (`repo_id`,`created_unix`);--> statement-breakpoint
CREATE INDEX `IDX_action_act_user` ON `action` (`act_user_id`);--> statement-breakpoint
CREATE TABLE `collaboration` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`mode` integer DEFAULT 2 NOT NULL,
	`created_unix` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_unix` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_collaboration_s` ON `collaboration` (`repo_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `IDX_collaboration_user_id` ON `collaboration` (`user_id`);--> statement-breakpoint
CREATE TABLE `label` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer DEFAULT 0 NOT NULL,
	`org_id` integer DEFAULT 0 NOT NULL,
	`name` text NOT NULL,
	`exclusive` integer DEFAULT false NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`color` text NOT NULL,
	`num_issues` integer DEFAULT 0 NOT NULL,
	`num_closed_issues` integer DEFAULT 0 NOT NULL,
	`archived_unix` integer DEFAULT 0 NOT NULL,
	`created_unix` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_unix` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `IDX_label_repo_id` ON `label` (`repo_id`);--> statement-breakpoint
CREATE INDEX `IDX_label_org_id` ON `label` (`org_id`);--> statement-breakpoint
CREATE TABLE `mirror` (
	`repo_id` integer PRIMARY KEY NOT NULL,
	`interval_ms` integer DEFAULT 28800000 NOT NULL,
	`enable_prune` integer DEFAULT true NOT NULL,
	`updated_unix` integer DEFAULT 0 NOT NULL,
	`next_update_unix` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE `repo_redirect` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`owner_id` integer NOT NULL,
	`lower_name` text NOT NULL,
	`redirect_repo_id` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_repo_redirect_s` ON `repo_redirect` (`owner_id`,`lower_name`);--> statement-breakpoint
CREATE INDEX `IDX_repo_redirect_repo` ON `repo_redirect` (`redirect_repo_id`);--> statement-breakpoint
CREATE TABLE `repo_unit` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` integer NOT NULL,
	`type` integer NOT NULL,
	`config` text DEFAULT '{}' NOT NULL,
	`created_unix` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_repo_unit_s` ON `repo_unit` (`repo_id`,`type`);--> statement-breakpoint
CREATE TABLE `repository` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`owner_id` integer NOT NULL,
	`owner_name` text NOT NULL,
	`lower_name` text NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`website` text DEFAULT '' NOT NULL,
	`original_url` text DEFAULT '' NOT NULL,
	`default_branch` text DEFAULT '' NOT NULL,
	`num_watches` integer DEFAULT 0 NOT NULL,
	`num_stars` integer DEFAULT 0 NOT NULL,
	`num_forks` integer DEFAULT 0 NOT NULL,
	`num_issues` integer DEFAULT 0 NOT NULL,
	`num_closed_issues` integer DEFAULT 0 NOT NULL,
	`num_pulls` integer DEFAULT 0 NOT NULL,
	`num_closed_pulls` integer DEFAULT 0 NOT NULL,
	`num_releases` integer DEFAULT 0 NOT NULL,
	`is_private` integer DEFAULT false NOT NULL,
	`is_empty` integer DEFAULT false NOT NULL,
	`is_archived` integer DEFAULT false NOT NULL,
	`is_mirror` integer DEFAULT false NOT NULL,
	`is_fork` integer DEFAULT false NOT NULL,
	`fork_id` integer DEFAULT 0 NOT NULL,
	`is_template` integer DEFAULT false NOT NULL,
	`template_id` integer DEFAULT 0 NOT NULL,
	`size` integer DEFAULT 0 NOT NULL,
	`topics` text DEFAULT '[]' NOT NULL,
	`object_format_name` text DEFAULT 'sha1' NOT NULL,
	`trust_model` integer DEFAULT 0 NOT NULL,
	`created_unix` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_unix` integer DEFAULT (unixepoch()) NOT NULL,
	`archived_unix` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_repository_s` ON `repository` (`owner_id`,`lower_name`);--> statement-breakpoint
CREATE INDEX `IDX_repository_lower_name` ON `repository` (`lower_name`);--> statement-breakpoint
CREATE INDEX `IDX_repository_is_private` ON `repository` (`is_private`);--> statement-breakpoint
CREATE INDEX `IDX_repository_fork_id` ON `repository` (`fork_id`);--> statement-breakpoint
CREATE INDEX `IDX_repository_updated` ON `repository` (`updated_unix`);--> statement-breakpoint
CREATE TABLE `star` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`repo_id` integer NOT NULL,
	`created_unix` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_star_s` ON `star` (`uid`,`repo_id`);--> statement-breakpoint
CREATE INDEX `IDX_star_repo` ON `star` (`repo_id`);