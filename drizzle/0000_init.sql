CREATE TABLE `access_token` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_last_eight` text NOT NULL,
	`scope` text DEFAULT '' NOT NULL,
	`created_unix` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_unix` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_access_token_token_hash` ON `access_token` (`token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_access_token_uid_name` ON `access_token` (`uid`,`name`);--> statement-breakpoint
CREATE TABLE `email_address` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`email` text NOT NULL,
	`lower_email` text NOT NULL,
	`is_activated` integer DEFAULT false NOT NULL,
	`is_primary` integer DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_email_address_lower_email` ON `email_address` (`lower_email`);--> statement-breakpoint
CREATE INDEX `IDX_email_address_uid` ON `email_address` (`uid`);--> statement-breakpoint
CREATE TABLE `login_source` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`type` integer NOT NULL,
	`name` text NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`created_unix` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_login_source_name` ON `login_source` (`name`);--> statement-breakpoint
CREATE TABLE `org_user` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`uid` integer NOT NULL,
	`org_id` integer NOT NULL,
	`is_public` integer DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_org_user_s` ON `org_user` (`uid`,`org_id`);--> statement-breakpoint
CREATE INDEX `IDX_org_user_org_id` ON `org_user` (`org_id`);--> statement-breakpoint
CREATE TABLE `team` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`lower_name` text NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`authorize` integer DEFAULT 0 NOT NULL,
	`num_repos` integer DEFAULT 0 NOT NULL,
	`num_members` integer DEFAULT 0 NOT NULL,
	`includes_all_repositories` integer DEFAULT false NOT NULL,
	`can_create_org_repo` integer DEFAULT false NOT NULL,
	`visibility` text DEFAULT 'private' NOT NULL,
	`created_unix` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_unix` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_team_org_lower_name` ON `team` (`org_id`,`lower_name`);--> statement-breakpoint
CREATE TABLE `team_repo` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`team_id` integer NOT NULL,
	`repo_id` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_team_repo_s` ON `team_repo` (`team_id`,`repo_id`);--> statement-breakpoint
CREATE INDEX `IDX_team_repo_repo` ON `team_repo` (`repo_id`);--> statement-breakpoint
CREATE TABLE `team_unit` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`team_id` integer NOT NULL,
	`type` integer NOT NULL,
	`access_mode` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_team_unit_s` ON `team_unit` (`team_id`,`type`);--> statement-breakpoint
CREATE TABLE `team_user` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` integer NOT NULL,
	`team_id` integer NOT NULL,
	`uid` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_team_user_s` ON `team_user` (`team_id`,`uid`);--> statement-breakpoint
CREATE INDEX `IDX_team_user_uid_org` ON `team_user` (`uid`,`org_id`);--> statement-breakpoint
CREATE TABLE `user` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`lower_name` text NOT NULL,
	`name` text NOT NULL,
	`full_name` text DEFAULT '' NOT NULL,
	`email` text DEFAULT '' NOT NULL,
	`keep_email_private` integer DEFAULT false NOT NULL,
	`passwd` text DEFAULT '' NOT NULL,
	`passwd_hash_algo` text DEFAULT '' NOT NULL,
	`must_change_password` integer DEFAULT false NOT NULL,
	`login_type` integer DEFAULT 0 NOT NULL,
	`login_source` integer DEFAULT 0 NOT NULL,
	`login_name` text DEFAULT '' NOT NULL,
	`type` integer DEFAULT 0 NOT NULL,
	`location` text DEFAULT '' NOT NULL,
	`website` text DEFAULT '' NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`language` text DEFAULT '' NOT NULL,
	`visibility` integer DEFAULT 0 NOT NULL,
	`is_admin` integer DEFAULT false NOT NULL,
	`is_active` integer DEFAULT false NOT NULL,
	`prohibit_login` integer DEFAULT false NOT NULL,
	`is_restricted` integer DEFAULT false NOT NULL,
	`allow_create_organization` integer DEFAULT true NOT NULL,
	`allow_git_hook` integer DEFAULT false NOT NULL,
	`allow_import_local` integer DEFAULT false NOT NULL,
	`max_repo_creation` integer DEFAULT -1 NOT NULL,
	`repo_admin_change_team_access` integer DEFAULT false NOT NULL,
	`num_followers` integer DEFAULT 0 NOT NULL,
	`num_following` integer DEFAULT 0 NOT NULL,
	`num_stars` integer DEFAULT 0 NOT NULL,
	`num_repos` integer DEFAULT 0 NOT NULL,
	`num_teams` integer DEFAULT 0 NOT NULL,
	`num_members` integer DEFAULT 0 NOT NULL,
	`created_unix` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_unix` integer DEFAULT (unixepoch()) NOT NULL,
	`last_login_unix` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_user_lower_name` ON `user` (`lower_name`);--> statement-breakpoint
CREATE INDEX `IDX_user_type` ON `user` (`type`);--> statement-breakpoint
CREATE TABLE `user_blocking` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`blocker_id` integer NOT NULL,
	`blockee_id` integer NOT NULL,
	`note` text DEFAULT '' NOT NULL,
	`created_unix` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `UQE_user_blocking_s` ON `user_blocking` (`blocker_id`,`blockee_id`);--> statement-breakpoint
CREATE INDEX `IDX_user_blocking_blockee` ON `user_blocking` (`blockee_id`);