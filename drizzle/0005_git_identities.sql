CREATE TABLE `git_identity` (
	`repo_id` integer NOT NULL,
	`email` text NOT NULL,
	PRIMARY KEY(`repo_id`, `email`)
);
